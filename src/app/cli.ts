// The `case-read` command line: the tree of commands (src/app/cli/, on commander), run with
// the process's streams and environment, or with those a caller hands in (the tests, and
// scripts/start.mjs). Each command's work is in src/app/commands/, loaded only when it runs.
import { CommanderError } from '@commander-js/extra-typings';
import { StoreError } from '../ports/stores.js';
import { ACCESS_WORDS, accessCommands } from './cli/access.js';
import { AUDIT_WORDS, auditCommands, subjectAccessCommand } from './cli/audit.js';
import { OPERATOR_WORDS, operatorCommands } from './cli/operator.js';
import { type StoreWords, storeOptions } from './cli/options.js';
import { CliRun, finishTree, helpPointer, rootCommand } from './cli/program.js';
import { SERVICE_WORDS, serviceCommands } from './cli/service.js';
import { CommandError, EXIT, OutputClosedError, UsageError } from './commands/exit.js';
import type { Io } from './commands/io.js';
import { ConfigError, STORE_VARIABLES } from './composition/config.js';
import { STORE_REGISTRY } from './composition/store-kinds.js';

export { EXIT };

/**
 * The process's streams. A reader that closes early (`case-read --help | head -1`, `audit query
 * | head`) makes the next write fail with EPIPE, reported as an 'error' event that would
 * otherwise end the process with a stack trace: here it is taken as the stream closed, and the
 * command's next line throws {@link OutputClosedError}, which ends it quietly (exit 141). The
 * event comes a tick after the write: a command that prints all it has in one go has ended by
 * then, and exits as it would have (0). Once stderr's
 * reader is gone, nothing more can be said there.
 */
function processIo(): Io {
  let outClosed = false;
  let errClosed = false;
  process.stdout.on('error', () => {
    outClosed = true;
  });
  process.stderr.on('error', () => {
    errClosed = true;
  });
  return {
    out: (line) => {
      if (outClosed) throw new OutputClosedError();
      process.stdout.write(`${line}\n`);
    },
    err: (line) => {
      if (!errClosed) process.stderr.write(`${line}\n`);
    },
    env: process.env,
    stderrIsTty: Boolean(process.stderr.isTTY),
  };
}

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
  finishTree(root, { ...SERVICE_WORDS, ...OPERATOR_WORDS, ...ACCESS_WORDS, ...AUDIT_WORDS });
  return root;
}

/**
 * Runs the CLI and returns the exit status: 0 success, 1 failure, 2 usage, 75 busy (exit.ts).
 * `case-read help [COMMAND...]` is `case-read [COMMAND...] --help`.
 */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const run = new CliRun(io);
  const args = argv[0] === 'help' ? [...argv.slice(1), '--help'] : argv;
  try {
    await program(run).parseAsync(args, { from: 'user' });
    return run.status;
  } catch (error) {
    // Commander has printed its help or its error (naming the option or argument, and where
    // the command's help is): --help is a success, anything else a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (error instanceof OutputClosedError) return EXIT.outputClosed;
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
