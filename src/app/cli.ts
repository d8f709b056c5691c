import { PERMISSIONS } from '../domain/access/permissions.js';
import { StoreError } from '../ports/stores.js';
import { CommandError, EXIT, UsageError } from './commands/exit.js';
import type { Io } from './commands/io.js';
import { ConfigError, STORE_VARIABLES } from './composition/config.js';
import { STORE_REGISTRY } from './composition/store-kinds.js';

export { EXIT };

/** One line of the usage text: which commands take which store option, and the forms the registry accepts. */
function storeLine(
  commands: string,
  flag: string,
  variable: keyof typeof STORE_VARIABLES,
  forms: string,
): string {
  return `  ${commands} commands: ${flag} ${forms} (else ${variable}, else ${STORE_VARIABLES[variable].fallback})`;
}

export const USAGE = `usage:
  case-read serve
  case-read pki init --dir DIR
  case-read pki client CN --dir DIR [--days N]
  case-read cases import FILE... [--store STORE]
  case-read cases generate --count N [--store STORE] [--seed S]
  case-read cases access CRN [--store STORE]
  case-read clients add CN --permissions P[,P...] [--queue-arn ARN] [--role-arn ARN] [--rate-limit N/DURATION]
                    [--obo forbidden|optional|required --obo-issuer I --obo-jwks J --obo-audience A [--obo-email-claim C]]
                    [--redact FIELD[,FIELD...]] [--limited-access deny|allow]
  case-read clients update CN [--redact FIELD[,FIELD...]|none] [--limited-access deny|allow]
  case-read clients list | show CN | suspend CN | resume CN | remove CN
  case-read keys issue CN [--expires-in DURATION] | list CN | revoke KEY_ID
  case-read certs sign CSR_FILE --client CN [--days N] [--out FILE]
  case-read certs revoke SERIAL [--client CN]
  case-read grants add EMAIL P[,P...] | remove EMAIL P[,P...] | list
  case-read tokens mint --client CN [--dir DIR] [--expires-in DURATION] [--bind-cert PEM]
  case-read audit verify [--public-key PEM]... [--checkpoints FILE]... [--origin O] [--policy FILE]
  case-read audit verify --since CHECKPOINT_FILE (--vkey VKEY | --public-key PEM [--origin O]) [--policy FILE]
  case-read audit query [--request-id ID] [--client CN] [--crn CRN] [--since ISO] [--limit N]
  case-read audit query --archive DIR (--vkey VKEY | --public-key PEM [--origin O]) [--request-id ID] [--client CN] [--crn CRN] [--since ISO] [--limit N]
  case-read audit checkpoints [--policy FILE] | keygen --dir DIR
  case-read audit vkey [--public-key PEM] [--origin O]
  case-read audit verify-proof PROOF ENTRY --vkey VKEY_LINE_OR_FILE [--policy FILE]
  case-read audit checkpoint
  case-read audit prove REQUEST_ID|--seq N --out DIR [--policy FILE]
  case-read audit prove --archive DIR REQUEST_ID|--seq N --out DIR (--vkey VKEY | --public-key PEM [--origin O])
  case-read audit prove --consistency OLD_SIZE [--size NEW_SIZE]
  case-read audit prove --consistency OLD_SIZE --archive DIR (--vkey VKEY | --public-key PEM [--origin O])
  case-read audit archive --to DIR (--before TIME | --older-than DAYS) [--keep-in-store] [--public-key PEM]...
  case-read audit archive --to DIR --let-go-only [--public-key PEM]...
  case-read audit verify --archive DIR (--vkey VKEY | --public-key PEM [--origin O]) [--policy FILE [--audit-store STORE]]
  case-read stores migrate [--case-store STORE] [--access-store STORE] [--audit-store STORE]
  case-read config check
  case-read openapi
  case-read witness keygen --name NAME --dir DIR
  case-read witness serve
  case-read help

Permissions: ${PERMISSIONS.join(', ')}.
Stores (each option, else its variable, else the default):
${storeLine('cases', '--store', 'CASE_STORE', STORE_REGISTRY.caseWriterForms())}
${storeLine(
  'admin',
  '--access-store',
  'ACCESS_STORE',
  STORE_REGISTRY.formsFor('access', (k) => k.access?.openAdmin !== undefined),
)}
${storeLine('audit', '--audit-store', 'AUDIT_STORE', STORE_REGISTRY.formsFor('audit'))}
  stores migrate: --case-store, --access-store and --audit-store, each else its variable, else its default
Every command takes --json for machine-readable output. Configuration: see docs/operations/configuration.md.
The witness (witness keygen, witness serve) has its own variables: see docs/operations/witness.md.`;

const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  stderrIsTty: Boolean(process.stderr.isTTY),
};

/**
 * Each command's module is loaded only when it runs: an operator command does not pay for
 * loading the HTTP app, the AWS SDK or a database driver it does not use.
 */
async function dispatch(argv: string[], io: Io): Promise<number> {
  const [command, sub, ...rest] = argv;
  switch (command) {
    case 'serve':
      return (await import('./commands/serve.js')).serve(argv.slice(1), io);
    case 'cases':
      return (await import('./commands/cases.js')).cases(sub, rest, io);
    case 'pki':
      return (await import('./commands/pki.js')).pki(sub, rest, io);
    case 'clients':
    case 'keys':
    case 'certs':
    case 'grants':
      return (await import('./commands/access.js')).accessCommands[command](sub, rest, io);
    case 'tokens':
      return (await import('./commands/tokens.js')).tokens(sub, rest, io);
    case 'audit':
      return (await import('./commands/audit/index.js')).audit(sub, rest, io);
    case 'stores':
      return (await import('./commands/stores.js')).stores(sub, rest, io);
    case 'config':
      if (sub === 'check') return (await import('./commands/config-check.js')).configCheck(rest, io);
      throw UsageError.unknownSubcommand('config', 'check', sub);
    case 'openapi':
      return (await import('./commands/openapi.js')).openapi(argv.slice(1), io);
    case 'witness':
      return (await import('./commands/witness.js')).witness(sub, rest, io);
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

/** Runs the CLI and returns the exit status: 0 success, 1 failure, 2 usage, 75 busy (exit.ts). */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`case-read: ${error.message}`);
      io.err(USAGE);
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
