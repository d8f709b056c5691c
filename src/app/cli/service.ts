// The commands that run or describe the service and the witness: `serve`, `config check`,
// `stores migrate`, `openapi`, `witness`: what each says in its help (SERVICE_WORDS), then the
// tree of them. Their work is in src/app/commands/, loaded when one runs (work.ts).
import type { Command } from '@commander-js/extra-typings';
import { jsonOption, type StoreOptions } from './options.js';
import type { CliRun, WordsByPath } from './program.js';
import { work } from './work.js';

export const SERVICE_WORDS: WordsByPath = {
  serve: {
    summary: 'run the service: the HTTPS API and the management listener',
    description:
      'Runs the service until SIGTERM or SIGINT, configured by its environment variables alone (docs/operations/configuration.md); SIGHUP reloads the TLS files. Check a configuration first with `case-read config check`.',
    examples: ['TLS_CERT=server.pem TLS_KEY=server-key.pem TLS_CLIENT_CA=ca.pem case-read serve'],
  },
  config: {
    summary: "check the service's configuration",
  },
  'config check': {
    summary: 'validate the configuration as serve would, and print it with secrets masked',
    description:
      'Reads the environment as `serve` does (its files too: TLS, keys, the witness policy), reports the first problems found, else prints every setting in effect, secrets masked, and the connections the service makes.',
    examples: ['AUDIT_STORE=postgres://audit@db:5432/case_read case-read config check'],
  },
  stores: {
    summary: "bring the stores' schemas to this release",
  },
  'stores migrate': {
    summary: "bring every configured store to this release's schema",
    description:
      "Migrates the case, access and audit stores (each option, else its variable, else its default) to this release's schema, saying each one's version before and after; a store that fails does not stop the others. Nothing else is changed.",
    examples: ['case-read stores migrate --audit-store postgres://audit@db:5432/case_read'],
  },
  openapi: {
    summary: 'print the OpenAPI document, or write it as an HTML API reference',
    description:
      "Prints the OpenAPI document exactly as `serve` serves it at /openapi.json (with this environment's CRN_PATTERN and PUBLIC_URL), for a client generator. With --html, writes one self-contained HTML page of it instead, that a person opens in a browser.",
    examples: ['case-read openapi > openapi.json', 'case-read openapi --html api-reference.html'],
  },
  witness: {
    summary: "the C2SP tlog-witness that cosigns a log's checkpoints (docs/operations/witness.md)",
  },
  'witness keygen': {
    summary: 'create a witness key',
    description:
      "Writes a new cosigner key (Ed25519, cosignature/v1) to DIR/witness-key, mode 0600, never over an existing file; the last line printed is the witness's verifier key, for the logs' policies.",
    examples: ['case-read witness keygen --name witness.example.org/w1 --dir /secrets/witness'],
  },
  'witness serve': {
    summary: 'run the witness',
    description:
      'Answers POST /add-checkpoint (tlog-witness v1.0.0), GET /health and GET /metrics until SIGTERM or SIGINT, configured by its own variables (WITNESS_*: docs/operations/witness.md); SIGHUP reloads the TLS files.',
    examples: [
      'WITNESS_KEY=/secrets/witness/witness-key WITNESS_LOGS=logs WITNESS_STORE=sqlite:witness.db case-read witness serve',
    ],
  },
};

export function serviceCommands(root: Command, run: CliRun, stores: StoreOptions): void {
  root.command('serve').action(run.loads(work.serve)((m) => m.serve(run.io)));
  root
    .command('config')
    .command('check')
    .addOption(jsonOption())
    .action(run.loads(work.configCheck)((m, options) => m.configCheck(options, run.io)));
  root
    .command('stores')
    .command('migrate')
    .addOption(stores.migratedCaseStore())
    .addOption(stores.accessStore())
    .addOption(stores.auditStore())
    .addOption(jsonOption())
    .action(run.loads(work.stores)((m, options) => m.migrate(options, run.io)));
  root
    .command('openapi')
    .option('--html <FILE>', 'write the API reference page to FILE')
    .action(run.loads(work.openapi)((m, options) => m.openapi(options, run.io)));

  const witness = run.loads(work.witness);
  const witnessGroup = root.command('witness');
  witnessGroup
    .command('keygen')
    .requiredOption('--name <NAME>', "the witness's name, e.g. witness.example.org/w1")
    .requiredOption('--dir <DIR>', 'the directory to write the key in')
    .addOption(jsonOption())
    .action(witness((m, options) => m.keygen(options, run.io)));
  witnessGroup.command('serve').action(witness((m) => m.serve(run.io)));
}
