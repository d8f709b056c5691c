// The `case-read` command line: the tree of commands (src/app/cli/, on commander), run with
// the process's streams and environment, or with those a caller hands in (the tests, and
// scripts/start.mjs). Each command's work is in src/app/commands/, loaded only when it runs.
import { CommanderError } from '@commander-js/extra-typings';
import { StoreError } from '../ports/stores.js';
import { accessCommands } from './cli/access.js';
import { auditCommands, subjectAccessCommand } from './cli/audit.js';
import { operatorCommands } from './cli/operator.js';
import { type StoreWords, storeOptions } from './cli/options.js';
import { CliRun, finishTree, helpPointer, rootCommand } from './cli/program.js';
import { serviceCommands } from './cli/service.js';
import { CommandError, EXIT, UsageError } from './commands/exit.js';
import type { Io } from './commands/io.js';
import { ConfigError, STORE_VARIABLES } from './composition/config.js';
import { STORE_REGISTRY } from './composition/store-kinds.js';

export { EXIT };

const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  stderrIsTty: Boolean(process.stderr.isTTY),
};

/** What the store options say: the forms of the store kinds this service knows, and each store variable's default. */
const STORE_WORDS: StoreWords = {
  accessForms: STORE_REGISTRY.formsFor('access', (k) => k.access?.openAdmin !== undefined),
  auditForms: STORE_REGISTRY.formsFor('audit'),
  caseWriterForms: STORE_REGISTRY.caseWriterForms(),
  fallbackOf: (variable) => STORE_VARIABLES[variable].fallback,
};

/** The whole tree of commands, for one run: its store options say what `words` say of the stores. */
export function program(run: CliRun, words: StoreWords = STORE_WORDS) {
  const root = rootCommand(run);
  const stores = storeOptions(words);
  serviceCommands(root, run, stores);
  operatorCommands(root, run, stores);
  accessCommands(root, run, stores);
  auditCommands(root, run, stores);
  subjectAccessCommand(root, run, stores);
  finishTree(root);
  return root;
}

/**
 * Runs the CLI and returns the exit status: 0 success, 1 failure, 2 usage, 75 busy (exit.ts).
 * `case-read help [COMMAND...]` is `case-read [COMMAND...] --help`.
 */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const run = new CliRun(io);
  const args = argv[0] === 'help' ? [...argv.slice(1), '--help'] : argv;
  try {
    await program(run).parseAsync(args, { from: 'user' });
    return run.status;
  } catch (error) {
    // Commander has printed its help or its error (naming the option or argument, and where
    // the command's help is): --help is a success, anything else a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (error instanceof UsageError) {
      io.err(`case-read: ${error.message}`);
      io.err(helpPointer(run.path));
      return EXIT.usage;
    }
    if (error instanceof ConfigError || error instanceof StoreError || error instanceof CommandError) {
      io.err(`case-read: ${error.message}`);
      return error instanceof CommandError ? error.status : EXIT.failure;
    }
    io.err(`case-read: unexpected failure: ${(error as Error).message}`);
    return EXIT.failure;
  }
}
