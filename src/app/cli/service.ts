// The commands that run or describe the service and the witness: `serve`, `config check`,
// `stores migrate`, `openapi`, `witness`. Their work is in src/app/commands/, loaded when one runs.
import type { Command } from '@commander-js/extra-typings';
import { jsonOption, type StoreOptions } from './options.js';
import { type CliRun, example } from './program.js';
import { work } from './work.js';

export function serviceCommands(root: Command, run: CliRun, stores: StoreOptions): void {
  root
    .command('serve')
    .summary('run the service: the HTTPS API and the management listener')
    .description(
      'Runs the service until SIGTERM or SIGINT, configured by its environment variables alone (docs/operations/configuration.md); SIGHUP reloads the TLS files. Check a configuration first with `case-read config check`.',
    )
    .addHelpText(
      'after',
      example('TLS_CERT=server.pem TLS_KEY=server-key.pem TLS_CLIENT_CA=ca.pem case-read serve'),
    )
    .action(async () => run.done(await (await work.serve()).serve(run.io)));

  root
    .command('config')
    .summary("check the service's configuration")
    .command('check')
    .summary('validate the configuration as serve would, and print it with secrets masked')
    .description(
      'Reads the environment as `serve` does (its files too: TLS, keys, the witness policy), reports the first problems found, else prints every setting in effect, secrets masked, and the connections the service makes.',
    )
    .addOption(jsonOption())
    .addHelpText('after', example('AUDIT_STORE=postgres://audit@db:5432/case_read case-read config check'))
    .action(async (options) => run.done(await (await work.configCheck()).configCheck(options, run.io)));

  root
    .command('stores')
    .summary("bring the stores' schemas to this release")
    .command('migrate')
    .summary("bring every configured store to this release's schema")
    .description(
      "Migrates the case, access and audit stores (each option, else its variable, else its default) to this release's schema, saying each one's version before and after; a store that fails does not stop the others. Nothing else is changed.",
    )
    .addOption(stores.migratedCaseStore())
    .addOption(stores.accessStore())
    .addOption(stores.auditStore())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      example('case-read stores migrate --audit-store postgres://audit@db:5432/case_read'),
    )
    .action(async (options) => run.done(await (await work.stores()).migrate(options, run.io)));

  root
    .command('openapi')
    .summary('print the OpenAPI document, or write it as an HTML API reference')
    .description(
      "Prints the OpenAPI document exactly as `serve` serves it at /openapi.json (with this environment's CRN_PATTERN and PUBLIC_URL), for a client generator. With --html, writes one self-contained HTML page of it instead, that a person opens in a browser.",
    )
    .option('--html <FILE>', 'write the API reference page to FILE')
    .addHelpText(
      'after',
      example('case-read openapi > openapi.json', 'case-read openapi --html api-reference.html'),
    )
    .action(async (options) => run.done(await (await work.openapi()).openapi(options, run.io)));

  const witnessGroup = root
    .command('witness')
    .summary("the C2SP tlog-witness that cosigns a log's checkpoints (docs/operations/witness.md)");
  witnessGroup
    .command('keygen')
    .summary('create a witness key')
    .description(
      "Writes a new cosigner key (Ed25519, cosignature/v1) to DIR/witness-key, mode 0600, never over an existing file; the last line printed is the witness's verifier key, for the logs' policies.",
    )
    .requiredOption('--name <NAME>', "the witness's name, e.g. witness.example.org/w1")
    .requiredOption('--dir <DIR>', 'the directory to write the key in')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      example('case-read witness keygen --name witness.example.org/w1 --dir /secrets/witness'),
    )
    .action(async (options) => run.done(await (await work.witness()).keygen(options, run.io)));
  witnessGroup
    .command('serve')
    .summary('run the witness')
    .description(
      'Answers POST /add-checkpoint (tlog-witness v1.0.0), GET /health and GET /metrics until SIGTERM or SIGINT, configured by its own variables (WITNESS_*: docs/operations/witness.md); SIGHUP reloads the TLS files.',
    )
    .addHelpText(
      'after',
      example(
        'WITNESS_KEY=/secrets/witness/witness-key WITNESS_LOGS=logs WITNESS_STORE=sqlite:witness.db case-read witness serve',
      ),
    )
    .action(async () => run.done(await (await work.witness()).serve(run.io)));
}
