// What every scenario shares, made once per run with the service's CLI in a temporary
// directory: a PKI (CA, server and bench-client certificates, JWKS), the fixture cases in
// SQLite, an access store with the bench client, its API key and bearer token, and the
// environment `serve` runs with.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEVELOPMENT_GRANTS } from './grants.mjs';
import { ROOT } from './paths.mjs';

/** The run's temporary directory (removed by removeWorkDir, whatever happens). */
export const makeWorkDir = () => mkdtempSync(join(tmpdir(), 'case-read-bench-'));
export const removeWorkDir = (dir) => rmSync(dir, { recursive: true, force: true });

/**
 * The fixtures in `dir`, made by `caseRead` (lib/cli.mjs). The service's audit trail is
 * `auditKind` (sqlite or jsonl), a new file for every service started.
 */
export async function setUpFixtures({ dir, caseRead, auditKind }) {
  const pki = join(dir, 'pki');
  const access = `sqlite:${join(dir, 'access.db')}`;
  const cases = `sqlite:${join(dir, 'cases.db')}`;
  await caseRead(['pki', 'init', '--dir', pki]);
  await caseRead(['pki', 'client', 'bench-client', '--dir', pki]);
  await caseRead(['cases', 'import', join(ROOT, 'fixtures/cases.json'), '--store', cases]);
  /** The bench client, with what the development client holds and a queue, in an access store. */
  const addBenchClient = (store) =>
    caseRead([
      'clients',
      'add',
      'bench-client',
      '--access-store',
      store,
      '--permissions',
      DEVELOPMENT_GRANTS.join(','),
      '--queue-arn',
      'arn:aws:sqs:eu-west-2:000000000000:bench-queue',
    ]);
  await addBenchClient(access);
  const [apiKey] = await caseRead(['keys', 'issue', 'bench-client', '--access-store', access]);
  const [token] = await caseRead([
    'tokens',
    'mint',
    '--client',
    'bench-client',
    '--dir',
    pki,
    '--expires-in',
    '2h',
  ]);
  const tls = {
    ca: readFileSync(join(pki, 'ca.pem')),
    cert: readFileSync(join(pki, 'bench-client.pem')),
    key: readFileSync(join(pki, 'bench-client-key.pem')),
  };
  let auditStores = 0;
  /** The environment of `serve` reading `caseStore`, every other setting as the bench runs it. */
  const serviceEnv = (caseStore, overrides = {}) => ({
    PATH: process.env.PATH,
    HOST: '127.0.0.1',
    PORT: '0',
    MANAGEMENT_PORT: '0',
    TLS_CERT: join(pki, 'server.pem'),
    TLS_KEY: join(pki, 'server-key.pem'),
    TLS_CLIENT_CA: join(pki, 'ca.pem'),
    CASE_STORE: caseStore,
    ACCESS_STORE: access,
    AUDIT_STORE:
      auditKind === 'jsonl'
        ? `jsonl:${join(dir, `audit-${++auditStores}.jsonl`)}`
        : `sqlite:${join(dir, `audit-${++auditStores}.db`)}`,
    BEARER_MODE: 'required',
    BEARER_JWKS: join(pki, 'jwks.json'),
    BEARER_ISSUER: 'urn:case-read:dev-issuer',
    BEARER_AUDIENCE: 'case-read-service',
    CREDENTIALS_ISSUER: 'local',
    // On, with a quota high enough never to limit: the bench measures its cost, not its effect.
    RATE_LIMIT_DEFAULT: '100000000/1s',
    STS_ROLE_ARN: 'arn:aws:iam::000000000000:role/bench',
    LOG_LEVEL: 'warn',
    ...overrides,
  });
  return {
    dir,
    pki,
    /** The access store URL, with the bench client in it. */
    access,
    /** The case store URL of the fixture cases (SQLite). */
    cases,
    apiKey,
    token,
    /** The bench client's certificate, key and the CA, for node:https and autocannon. */
    tls,
    /** The headers of an authorised request: the API key and the bearer token. */
    auth: { 'x-api-key': apiKey, authorization: `Bearer ${token}` },
    caseRead,
    addBenchClient,
    serviceEnv,
  };
}
