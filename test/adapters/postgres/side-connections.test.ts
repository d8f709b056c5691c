import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresAccessDirectory } from '../../../src/adapters/postgres/access-directory.js';
import { sideConnection } from '../../../src/adapters/postgres/database.js';
import { postgresStores } from '../../../src/adapters/postgres/store-kind.js';
import { createCa, issueClientCertificate, issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import type { AccessAdministration, AccessDirectory } from '../../../src/ports/access-directory.js';
import type { AccessListenerFailure, NoSettings, Opened, StoreContext } from '../../../src/ports/stores.js';
import { StoreError } from '../../../src/ports/stores.js';
import { AccessMother } from '../../support/mothers.js';
import { makeTestWiring } from '../../support/stores.js';
import { OwnTlsPostgres } from '../../support/tls-postgres.js';

/**
 * Every connection to a PostgreSQL store carries the store's TLS settings, side connections
 * included (decisions §20), as the server sees them (pg_stat_ssl), against a server that takes
 * TCP connections only over TLS and only with a client certificate its CA signed: the access
 * store's LISTEN connection and the archive lock's, the listener made again with reloaded
 * files; and the access cache never trusted while the listener is down or silent, its
 * failures logged (never the password) and counted.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-pg-side-'));
const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'client.pem'), key: join(dir, 'client-key.pem') };
const clients: { certPem: string; keyPem: string }[] = [];
/** Never sent (the server trusts): it must appear in no log line. */
const PASSWORD = 'pw-never-logged-7f3a';
let postgres: OwnTlsPostgres;

const write = (client: { certPem: string; keyPem: string } | undefined) => {
  if (client === undefined) throw new Error('no such client certificate');
  writeFileSync(files.cert, client.certPem, { mode: 0o600 });
  writeFileSync(files.key, client.keyPem, { mode: 0o600 });
};

const urlOf = (schema: string) =>
  `${postgres.url.replace('postgres://root@', `postgres://root:${PASSWORD}@`)}?schema=${schema}&sslmode=verify-full&sslrootcert=${files.ca}&sslcert=${files.cert}&sslkey=${files.key}`;

const listenerName = (schema: string) => `case-read access listener ${schema}`;

/** How the server sees each connection of that application name: TLS or not, and the client certificate's subject. */
async function seen(application: string): Promise<{ ssl: boolean; client_dn: string | null; pid: number }[]> {
  const { rows } = await postgres.adminQuery(
    `SELECT s.ssl, s.client_dn, a.pid FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
     WHERE a.application_name = $1 ORDER BY a.backend_start`,
    [application],
    'postgres',
  );
  return rows;
}

/**
 * Polls `check` until it holds; fails naming `what` once 20 s have gone by (a bound far past
 * anything the code waits: 3 s for a silent listener, 1 s before a reconnection).
 */
async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never: ${what}`);
}

/** An access store on its own schema: the operator's side, and the service's reader with its listener. */
async function accessStore(schema: string) {
  const failures: AccessListenerFailure[] = [];
  const { wiring, lines } = makeTestWiring({ onAccessListenerFailure: (failure) => failures.push(failure) });
  const context: StoreContext<NoSettings> = { ...wiring, settings: {} };
  const admin = (await postgresStores.access?.openAdmin?.(urlOf(schema), context)) as
    | Opened<AccessAdministration>
    | undefined;
  const reader = (await postgresStores.access?.open(urlOf(schema), context)) as
    | Opened<AccessDirectory>
    | undefined;
  if (!admin || !reader) throw new Error('postgres cannot hold clients');
  await admin.value.saveClient(AccessMother.client('client-a'));
  await admin.value.addApiKey(AccessMother.key('key0000000000001', 'client-a'));
  const directory = reader.value as PostgresAccessDirectory;
  await directory.sync();
  return {
    admin,
    reader,
    directory,
    failures,
    lines,
    /** The three reads an admission makes; afterwards held() answers from the cache if it is trusted. */
    read: async () => {
      await directory.findApiKey('key0000000000001');
      await directory.findClient('client-a');
      await directory.isCertificateRevoked('CAFE', 'client-a');
    },
    held: () => directory.heldAdmission('key0000000000001', 'client-a', 'CAFE'),
    close: async () => {
      await reader.close();
      await admin.close();
    },
  };
}

beforeAll(async () => {
  const ca = await createCa({ commonName: 'stores CA' });
  const server = await issueServerCertificate(ca);
  for (const commonName of ['case-read-a', 'case-read-b'])
    clients.push(await issueClientCertificate(ca, { commonName }));
  writeFileSync(files.ca, ca.certPem);
  write(clients[0]);
  postgres = await OwnTlsPostgres.startWithPki({ ca, server }, { clientCert: 'verify-ca' });
}, 90_000);

afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('side connections to a TLS-only PostgreSQL asking for client certificates', {
  timeout: 60_000,
}, () => {
  it('the access store’s change listener connects over TLS with the client certificate, and the cache is used', async () => {
    write(clients[0]);
    const store = await accessStore('side_listen');
    try {
      expect(await seen(listenerName('side_listen'))).toEqual([
        expect.objectContaining({ ssl: true, client_dn: expect.stringMatching(/CN=case-read-a/) }),
      ]);
      await store.read();
      expect(store.held()?.client.id).toBe('client-a');
      expect(store.failures).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('the archive lock’s connection connects over TLS with the client certificate', async () => {
    write(clients[0]);
    const { wiring } = makeTestWiring();
    const audit = await postgresStores.audit?.open(
      urlOf('side_audit'),
      { ...wiring, settings: {} },
      { create: true },
    );
    if (!audit) throw new Error('postgres cannot hold the audit trail');
    try {
      const taken = await audit.value.lockArchive('side-probe');
      if (!('held' in taken)) throw new Error('the lock was not free');
      try {
        expect(await seen('case-read audit archive: side-probe')).toEqual([
          expect.objectContaining({ ssl: true, client_dn: expect.stringMatching(/CN=case-read-a/) }),
        ]);
      } finally {
        await taken.held.release();
      }
    } finally {
      await audit.close();
    }
  });

  it('after a TLS reload the listener is made again with the new certificate', async () => {
    write(clients[0]);
    const store = await accessStore('side_reload');
    try {
      expect(await seen(listenerName('side_reload'))).toEqual([
        expect.objectContaining({ client_dn: expect.stringMatching(/CN=case-read-a/) }),
      ]);
      write(clients[1]);
      expect((await store.reader.tls?.reload())?.subject).toBe('case-read-b');
      // The new connection replaces the old, which ends: one listener, presenting b.
      await until('one listener, presenting case-read-b', async () => {
        const rows = await seen(listenerName('side_reload'));
        return rows.length === 1 && /CN=case-read-b/.test(rows[0]?.client_dn ?? '');
      });
      // It hears changes: a write elsewhere reaches the cache.
      await store.read();
      expect(store.held()?.client.suspended).toBe(false);
      await store.admin.value.setSuspended('client-a', true);
      await store.directory.sync();
      expect(store.held()).toBeUndefined();
      expect(store.failures).toEqual([]);
    } finally {
      await store.close();
      write(clients[0]);
    }
  });

  it('with the listener unable to connect, a revoked key is refused at once; each failure logged (no password) and counted', async () => {
    write(clients[0]);
    const store = await accessStore('side_down');
    const listener = listenerName('side_down');
    try {
      await store.read();
      expect(store.held()).toBeDefined();
      // New connections to the database are refused; the pools keep the ones they hold.
      await postgres.adminQuery('ALTER DATABASE test ALLOW_CONNECTIONS false', [], 'postgres');
      await postgres.adminQuery(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [listener],
        'postgres',
      );
      await until('a failed reconnection counted', () => store.failures.includes('connect-failed'));
      expect(store.failures[0]).toBe('lost');
      expect(store.held()).toBeUndefined();
      // The key revoked elsewhere: the next read is the store's, not the cache's.
      await store.admin.value.revokeApiKey('key0000000000001', new Date());
      expect((await store.directory.findApiKey('key0000000000001'))?.revokedAt).toBeInstanceOf(Date);
      await store.read();
      expect(store.held()).toBeUndefined();
      const failed = store.lines.find((line) => line.message.includes('could not connect'));
      expect(failed).toMatchObject({
        level: 'warn',
        fields: { store: 'access store', schema: 'side_down', failure: 'connect-failed' },
      });
      expect(String(failed?.fields.err)).toMatch(/not currently accepting connections/);
      expect(JSON.stringify(store.lines)).not.toContain(PASSWORD);
      // Back: the listener reconnects and the cache is used again.
      await postgres.adminQuery('ALTER DATABASE test ALLOW_CONNECTIONS true', [], 'postgres');
      await until('the listener back', async () => {
        await store.read();
        return store.held() !== undefined;
      });
      expect(store.lines.map((line) => line.message)).toContain(
        'access store change listener back; caching again',
      );
    } finally {
      await postgres.adminQuery('ALTER DATABASE test ALLOW_CONNECTIONS true', [], 'postgres');
      await store.close();
    }
  });

  it('a listener that goes silent without ending stops vouching for the cache within its bound', async () => {
    write(clients[0]);
    const store = await accessStore('side_silent');
    const [row] = await seen(listenerName('side_silent'));
    if (row === undefined) throw new Error('no listener');
    try {
      await store.read();
      expect(store.held()?.client.suspended).toBe(false);
      // The listener's server process stops: its socket stays open, nothing arrives on it.
      process.kill(row.pid, 'SIGSTOP');
      await store.admin.value.setSuspended('client-a', true);
      await until('the change read despite the silent listener', async () => {
        return (await store.directory.findClient('client-a'))?.suspended === true;
      });
      // Its unanswered heartbeat ends it; it is counted, and made again.
      await until('the silent listener counted', () => store.failures.includes('silent'));
      await until('a new listener', async () => (await seen(listenerName('side_silent'))).length === 2);
    } finally {
      process.kill(row.pid, 'SIGCONT');
      await store.close();
    }
  });
});

describe('sideConnection', () => {
  it('refuses a pool made without TLS settings, so the driver never reads PGSSLMODE instead', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://u@127.0.0.1:1/db' });
    try {
      expect(() => sideConnection(pool, 'case-read test')).toThrow(StoreError);
      expect(() => sideConnection(pool, 'case-read test')).toThrow(
        /case-read test: the store's pool has no TLS settings/,
      );
    } finally {
      await pool.end();
    }
  });
});
