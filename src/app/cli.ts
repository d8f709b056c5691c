import { CaseFileError } from '../adapters/memory/case-file.js';
import { AccessStoreError } from '../adapters/sqlite/access-directory.js';
import { AuditStoreError } from '../adapters/sqlite/audit-log.js';
import { CaseStoreError } from '../adapters/sqlite/case-store.js';
import { accessCommands } from './commands/access.js';
import { audit } from './commands/audit.js';
import { cases } from './commands/cases.js';
import { CommandError, EXIT, type Io, UsageError } from './commands/common.js';
import { configCheck } from './commands/config-check.js';
import { pki } from './commands/pki.js';
import { serve } from './commands/serve.js';
import { tokens } from './commands/tokens.js';
import { ConfigError } from './config.js';

export { EXIT };

export const USAGE = `usage:
  case-read serve
  case-read pki init --dir DIR
  case-read pki client CN --dir DIR [--days N]
  case-read cases import FILE... [--store sqlite:PATH]
  case-read cases generate --count N [--store sqlite:PATH] [--seed S]
  case-read clients add CN --permissions P[,P...] [--queue-arn ARN] [--role-arn ARN] [--rate-limit N/DURATION]
                    [--obo forbidden|optional|required --obo-issuer I --obo-jwks J --obo-audience A [--obo-email-claim C]]
  case-read clients list | show CN | suspend CN | resume CN | remove CN
  case-read keys issue CN [--expires-in DURATION] | list CN | revoke KEY_ID
  case-read certs revoke SERIAL [--client CN]
  case-read grants add EMAIL P[,P...] | remove EMAIL P[,P...] | list
  case-read tokens mint --client CN [--dir DIR] [--expires-in DURATION] [--bind-cert PEM]
  case-read audit verify | query [--client CN] [--crn CRN] [--since ISO] [--limit N]
  case-read config check
  case-read help

Permissions: getCase, getHomeOfficeInterest, getCommunityManagerByCrn, getRiskScores, issueQueueToken.
Admin commands take --access-store sqlite:PATH (else ACCESS_STORE, else sqlite:./data/access.db);
audit commands take --audit-store sqlite:PATH (else AUDIT_STORE, else sqlite:./data/audit.db).
Every command takes --json for machine-readable output. Configuration: see README, "Configuration".`;

const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  stderrIsTty: Boolean(process.stderr.isTTY),
};

async function dispatch(argv: string[], io: Io): Promise<number> {
  const [command, sub, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(argv.slice(1), io);
    case 'cases':
      return cases(sub, rest, io);
    case 'pki':
      return pki(sub, rest, io);
    case 'clients':
    case 'keys':
    case 'certs':
    case 'grants':
      return accessCommands[command](sub, rest, io);
    case 'tokens':
      return tokens(sub, rest, io);
    case 'audit':
      return audit(sub, rest, io);
    case 'config':
      if (sub === 'check') return configCheck(rest, io);
      throw new UsageError(
        sub === undefined ? 'config needs a subcommand: check' : `unknown config subcommand: ${sub}`,
      );
    case 'help':
    case '--help':
    case '-h':
      io.out(USAGE);
      return EXIT.ok;
    case undefined:
      throw new UsageError('a command is needed');
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

/** Runs the CLI and returns the exit status: 0 success, 1 failure, 2 usage. */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`case-read: ${error.message}`);
      io.err(USAGE);
      return EXIT.usage;
    }
    if (
      error instanceof ConfigError ||
      error instanceof CaseFileError ||
      error instanceof CaseStoreError ||
      error instanceof AccessStoreError ||
      error instanceof AuditStoreError ||
      error instanceof CommandError
    ) {
      io.err(`case-read: ${error.message}`);
      return EXIT.failure;
    }
    io.err(`case-read: unexpected failure: ${(error as Error).message}`);
    return EXIT.failure;
  }
}
