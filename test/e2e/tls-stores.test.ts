import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Ca,
  createCa,
  issueClientCertificate,
  issueServerCertificate,
} from '../../src/adapters/x509/pki.js';
import { prepareServe, runCli, type ServeSetup, startServe } from '../support/cli.js';
import { httpsRequest } from '../support/https-client.js';
import { OwnRedis, uniquePrefix } from '../support/redis.js';
import { OwnTlsPostgres } from '../support/tls-postgres.js';
import { OwnTlsRedis } from '../support/tls-redis.js';
import { windowWithRoom } from '../support/windows.js';

/**
 * Decisions §17: PostgreSQL and Redis over TLS, against servers of this file's own that speak
 * nothing else (`hostssl` only in pg_hba.conf; Redis on a TLS port alone), each asking for a
 * client certificate. With the right CA every store works through `serve`; with another CA,
 * or without TLS, the start is refused at once, naming the store and the reason.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-tls-stores-'));
const write = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
};

let ca: Ca;
let postgres: OwnTlsPostgres;
let redis: OwnTlsRedis;
let setup: ServeSetup;
const prefix = uniquePrefix('tls');
const files = { ca: '', otherCa: '', cert: '', key: '' };

/** The store URL with libpq's TLS parameters: verify-full, the test CA, a client certificate. */
const storeUrl = (params: string) => `${postgres.url}?schema=tls_stores&${params}`;
const verified = () =>
  storeUrl(`sslmode=verify-full&sslrootcert=${files.ca}&sslcert=${files.cert}&sslkey=${files.key}`);

beforeAll(async () => {
  ca = await createCa({ commonName: 'stores CA' });
  const server = await issueServerCertificate(ca);
  const client = await issueClientCertificate(ca, { commonName: 'case-read' });
  files.ca = write('stores-ca.pem', ca.certPem);
  files.otherCa = write('other-ca.pem', (await createCa({ commonName: 'some other CA' })).certPem);
  files.cert = write('client.pem', client.certPem);
  files.key = write('client-key.pem', client.keyPem);
  [postgres, redis] = await Promise.all([
    // A client certificate of the stores CA is required, as `clientcert=verify-ca` says.
    OwnTlsPostgres.startWithPki({ ca, server }, { clientCert: 'verify-ca' }),
    OwnTlsRedis.startWithPki({ ca, server }, { authClients: 'yes' }),
  ]);
  const url = verified();
  // The operator's commands (cases import, clients add, keys issue) go over TLS too.
  setup = prepareServe(dir, { stores: { CASE_STORE: url, ACCESS_STORE: url, AUDIT_STORE: url } });
}, 90_000);

afterAll(async () => {
  await Promise.all([postgres?.stop(), redis?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const redisEnv = () => ({
  RATE_LIMIT_STORE: redis.url,
  RATE_LIMIT_TLS_CA: files.ca,
  RATE_LIMIT_TLS_CERT: files.cert,
  RATE_LIMIT_TLS_KEY: files.key,
  RATE_LIMIT_PREFIX: prefix,
  // Only a count made in Redis lets a request through: a store that failed would answer 503.
  RATE_LIMIT_ON_STORE_FAILURE: 'deny',
  RATE_LIMIT_TIMEOUT_MS: '2000',
});

/** `serve` with `env` over the setup's, which must refuse to start: its output, and how long it took. */
async function refusal(env: Record<string, string>): Promise<{ output: string; ms: number }> {
  const started = performance.now();
  const error = await startServe({ ...setup.env, ...redisEnv(), ...env }).then(
    (server) => {
      server.child.kill('SIGKILL');
      throw new Error('serve started');
    },
    (e: Error) => e,
  );
  return { output: error.message, ms: performance.now() - started };
}

describe('PostgreSQL and Redis over TLS, through serve', () => {
  it('with the right CA every store works: reads answered, the trail kept, rate limits counted in Redis', async () => {
    // The counts are read once serve has stopped, and Redis keeps a count until its window
    // ends (and a second): a window chosen now, with 5 minutes left, not the default's second,
    // which may end before they are read, depending on where in it the clock falls.
    const quota = `100/${windowWithRoom(10 * 60_000, 5 * 60_000)}`;
    const server = await startServe({ ...setup.env, ...redisEnv(), RATE_LIMIT_DEFAULT: quota });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
          ca: setup.ca,
          ...setup.client,
          headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
        });
        expect(res.status).toBe(200);
      }
      expect(server.output()).toMatch(
        /"caseStore":"[^"]+\(case store, schema tls_stores, TLS verify-full\)"/,
      );
      // Every connection the service holds to the database is TLS (pg_hba.conf allows no other).
      const connections = await postgres.adminQuery(
        "SELECT s.ssl, s.client_dn FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name LIKE 'case-read %'",
      );
      expect(connections.rowCount).toBeGreaterThan(0);
      for (const row of connections.rows) {
        expect(row.ssl).toBe(true);
        expect(row.client_dn).toMatch(/\/CN=case-read$/);
      }
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }
    // The three reads were counted in Redis, over TLS with the client certificate.
    const counter = new Redis(redis.url, {
      tls: { ca: ca.certPem, cert: readFileSync(files.cert, 'utf8'), key: readFileSync(files.key, 'utf8') },
      lazyConnect: true,
    });
    counter.on('error', () => {});
    await counter.connect();
    const keys = await counter.keys(`${prefix}*`);
    const counts = await Promise.all(keys.map((key) => counter.get(key)));
    counter.disconnect();
    expect(counts.reduce((sum, n) => sum + Number(n), 0)).toBe(3);
    // The trail verifies end to end, read over TLS.
    expect(setup.cli('audit', 'verify')).toMatch(/^audit chain intact: 3 record\(s\)/);
  }, 60_000);

  it.each([
    [
      'another CA',
      () => ({
        CASE_STORE: storeUrl(
          `sslmode=verify-full&sslrootcert=${files.otherCa}&sslcert=${files.cert}&sslkey=${files.key}`,
        ),
      }),
      /case store cannot be reached \(the server's certificate does not verify: (SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/,
    ],
    [
      'no TLS',
      () => ({ CASE_STORE: storeUrl('schema=tls_stores').replace('&schema=tls_stores', '') }),
      /case store cannot be reached \(28000: no pg_hba\.conf entry for host "127\.0\.0\.1", user "root", database "test", no encryption\)/,
    ],
    [
      'TLS without the client certificate the server asks for',
      () => ({ CASE_STORE: storeUrl(`sslmode=verify-full&sslrootcert=${files.ca}`) }),
      /case store cannot be reached \(28000: connection requires a valid client certificate\)/,
    ],
  ])(
    'PostgreSQL with %s: the start is refused within 15 s, naming the store and the reason',
    async (_, env, reason) => {
      const { output, ms } = await refusal(env());
      expect(output).toMatch(reason);
      expect(ms).toBeLessThan(15_000);
    },
    30_000,
  );

  it.each([
    [
      'another CA',
      () => ({ RATE_LIMIT_TLS_CA: files.otherCa }),
      /rate-limit store: the server's certificate does not verify \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\); RATE_LIMIT_TLS_CA must hold the CA that signed it/,
    ],
    [
      'no TLS (redis://)',
      () => ({
        RATE_LIMIT_STORE: redis.url.replace('rediss://', 'redis://'),
        RATE_LIMIT_TLS_CA: '',
        RATE_LIMIT_TLS_CERT: '',
        RATE_LIMIT_TLS_KEY: '',
      }),
      /rate-limit store: the server speaks TLS; use rediss:\/\//,
    ],
  ])(
    'Redis with %s: the start is refused within 15 s, naming the store and the reason',
    async (_, env, reason) => {
      const { output, ms } = await refusal(env());
      expect(output).toMatch(reason);
      expect(ms).toBeLessThan(15_000);
    },
    30_000,
  );

  it('rediss:// to a Redis that speaks plaintext is refused; one that is down is tolerated', async () => {
    const plain = await OwnRedis.start();
    try {
      const { output } = await refusal({ RATE_LIMIT_STORE: plain.url.replace('redis://', 'rediss://') });
      expect(output).toMatch(/rate-limit store: the server does not speak TLS \(rediss:\/\/ was given\)/);
      // Down: nothing answers on the port. serve starts, counting locally meanwhile.
      await plain.kill();
      const server = await startServe({
        ...setup.env,
        ...redisEnv(),
        RATE_LIMIT_STORE: plain.url.replace('redis://', 'rediss://'),
        RATE_LIMIT_ON_STORE_FAILURE: 'local',
      });
      expect(server.output()).toMatch(/rate-limit store unreachable at start; it will be retried/);
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    } finally {
      await plain.kill();
    }
  }, 60_000);

  it('a client key readable by others is refused, naming it and its mode (sslkey, RATE_LIMIT_TLS_KEY)', async () => {
    const open = join(dir, 'client-key-0644.pem');
    writeFileSync(open, readFileSync(files.key));
    chmodSync(open, 0o644);
    const pg = await refusal({
      CASE_STORE: storeUrl(
        `sslmode=verify-full&sslrootcert=${files.ca}&sslcert=${files.cert}&sslkey=${open}`,
      ),
    });
    expect(pg.output).toContain(`case store sslkey: ${open} is readable by others (mode 0644)`);
    const redisKey = await refusal({ RATE_LIMIT_TLS_KEY: open });
    expect(redisKey.output).toContain(`RATE_LIMIT_TLS_KEY: ${open} is readable by others (mode 0644)`);
    // Readable by the group (a secret volume's 0440 with fsGroup) is allowed.
    chmodSync(open, 0o640);
    const server = await startServe({ ...setup.env, ...redisEnv(), RATE_LIMIT_TLS_KEY: open });
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
  }, 60_000);

  it('stores migrate and the audit commands refuse another CA too', () => {
    const other = storeUrl(
      `sslmode=verify-full&sslrootcert=${files.otherCa}&sslcert=${files.cert}&sslkey=${files.key}`,
    );
    const migrate = runCli(['stores', 'migrate', '--case-store', other], { ...setup.env });
    expect(migrate.status).not.toBe(0);
    expect(migrate.stdout).toMatch(/case store cannot be reached \(the server's certificate does not verify/);
    expect(migrate.stderr).toMatch(/case store not migrated/);
    const audit = runCli(['audit', 'verify'], { ...setup.env, AUDIT_STORE: other });
    expect(audit.status).not.toBe(0);
    expect(audit.stderr).toMatch(/audit store cannot be reached \(the server's certificate does not verify/);
  });
});
