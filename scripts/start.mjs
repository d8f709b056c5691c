#!/usr/bin/env node
// `npm start`: the embedded default on one machine (decisions §7). On first run it creates
// .dev/ (git-ignored) holding a development PKI, SQLite stores seeded from fixtures/, the
// client `dev-client` with the permissions of every case operation and queue tokens
// (DEVELOPMENT_CLIENT_PERMISSIONS, src/domain/access/permissions.ts), its API key, and a dev
// token issuer; every run mints a fresh token. Then it serves on https://localhost:8443 and prints a curl command
// that works as pasted. Later runs reuse .dev/. Environment variables still override.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireSupportedRuntime } from '../bin/supported-runtime.js';

// Before anything of the service loads: on an unsupported Node, one line and exit 1, as
// `case-read` does (better-sqlite3 13, built for a newer Node, crashed Node 20 here).
requireSupportedRuntime('npm start');

const root = fileURLToPath(new URL('..', import.meta.url));
process.chdir(root);
const cliUrl = new URL('../dist/app/cli.js', import.meta.url);
if (!existsSync(cliUrl)) {
  process.stderr.write('npm start: dist/ is missing; run `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(cliUrl.href);
const { DEVELOPMENT_CLIENT_PERMISSIONS } = await import(
  new URL('../dist/domain/access/permissions.js', import.meta.url).href
);

const dev = join(root, '.dev');
const pki = join(dev, 'pki');
const files = {
  ca: join(pki, 'ca.pem'),
  cert: join(pki, 'dev-client.pem'),
  key: join(pki, 'dev-client-key.pem'),
  apiKey: join(dev, 'api-key'),
  token: join(dev, 'token'),
  cases: join(dev, 'cases.db'),
  access: join(dev, 'access.db'),
  auditKey: join(dev, 'audit-key'),
};
const access = ['--access-store', `sqlite:${files.access}`];
const quiet = {
  out: () => {},
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  stderrIsTty: false,
};
const capture = () => {
  const lines = [];
  return { io: { ...quiet, out: (line) => lines.push(line) }, lines };
};
async function run(args, io = quiet) {
  const status = await main(args, io);
  if (status !== 0) {
    process.stderr.write(`npm start: case-read ${args.join(' ')} failed (exit ${status})\n`);
    process.exit(status);
  }
}

if (!existsSync(files.ca)) {
  process.stdout.write('first run: creating .dev/ (development PKI, stores, client, key)\n');
  await run(['pki', 'init', '--dir', pki]);
}
if (!existsSync(files.cert)) await run(['pki', 'client', 'dev-client', '--dir', pki]);
// Every run: idempotent (the fixtures replace themselves), and it migrates a store made by an
// older version of the service.
await run(['cases', 'import', 'fixtures/cases.json', '--store', `sqlite:${files.cases}`]);
if (!existsSync(files.access)) {
  await run([
    'clients',
    'add',
    'dev-client',
    ...access,
    '--permissions',
    DEVELOPMENT_CLIENT_PERMISSIONS.join(','),
    '--queue-arn',
    'arn:aws:sqs:eu-west-2:000000000000:dev-client-queue',
  ]);
} else {
  // Any operator command migrates an access store made by an older version.
  await run(['clients', 'list', ...access], capture().io);
}
if (!existsSync(files.apiKey)) {
  const { io, lines } = capture();
  await run(['keys', 'issue', 'dev-client', ...access], io);
  writeFileSync(files.apiKey, `${lines[0]}\n`, { mode: 0o600 });
}
{
  const { io, lines } = capture();
  await run(['tokens', 'mint', '--client', 'dev-client', '--dir', pki, '--expires-in', '12h'], io);
  writeFileSync(files.token, `${lines[0]}\n`, { mode: 0o600 });
}

// Signed audit checkpoints (decisions §9), with a development key of its own.
if (!existsSync(join(files.auditKey, 'audit-signing-key.pem'))) {
  await run(['audit', 'keygen', '--dir', files.auditKey]);
}

const env = process.env;
env.TLS_CERT ??= join(pki, 'server.pem');
env.TLS_KEY ??= join(pki, 'server-key.pem');
env.TLS_CLIENT_CA ??= files.ca;
env.CASE_STORE ??= `sqlite:${files.cases}`;
env.ACCESS_STORE ??= `sqlite:${files.access}`;
env.AUDIT_STORE ??= `sqlite:${join(dev, 'audit.db')}`;
env.AUDIT_SIGNING_KEY ??= join(files.auditKey, 'audit-signing-key.pem');
env.BEARER_JWKS ??= join(pki, 'jwks.json');
env.BEARER_ISSUER ??= 'urn:case-read:dev-issuer';
env.BEARER_AUDIENCE ??= 'case-read-service';
env.CREDENTIALS_ISSUER ??= 'local';
env.STS_ROLE_ARN ??= 'arn:aws:iam::000000000000:role/case-read-dev-queue-reader';
env.HOST ??= '127.0.0.1';
env.PORT ??= '8443';

process.stdout.write(
  [
    '',
    'Try it (the token in .dev/token lasts 12 hours; npm start mints a new one):',
    `  curl --cert ${files.cert} --key ${files.key} --cacert ${files.ca} \\`,
    `    -H "x-api-key: $(cat ${files.apiKey})" -H "Authorization: Bearer $(cat ${files.token})" \\`,
    `    https://localhost:${env.PORT}/case/X123456`,
    '',
    `Health and metrics (plain HTTP): http://${env.HOST}:${env.MANAGEMENT_PORT ?? '9464'}/health/ready  /metrics`,
    '',
    'Queue credentials (the local development issuer; set CREDENTIALS_ISSUER=sts for AWS):',
    `  curl -X POST --cert ${files.cert} --key ${files.key} --cacert ${files.ca} \\`,
    `    -H "x-api-key: $(cat ${files.apiKey})" https://localhost:${env.PORT}/token`,
    '',
    'The audit trail, its chain and its signed checkpoints:',
    `  npx case-read audit verify --audit-store ${env.AUDIT_STORE} --public-key ${join(files.auditKey, 'audit-signing-key.pub.pem')}`,
    '',
    '',
  ].join('\n'),
);
process.exitCode = await main(['serve']);
