import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../../../src/adapters/postgres/store-kind.js';
import { createCa, issueClientCertificate, issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import type { AuditLog } from '../../../src/ports/audit-log.js';
import type { Opened } from '../../../src/ports/stores.js';
import { testContext } from '../../support/stores.js';
import { OwnTlsPostgres } from '../../support/tls-postgres.js';

/**
 * A PostgreSQL store's client certificate reloaded without a restart (decisions §17): the
 * `sslcert` and `sslkey` files rewritten in place, the store's reload reads and checks them,
 * and the next connection presents the new certificate, as the server sees it (pg_stat_ssl);
 * files that do not go together are refused, the certificate in use kept.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-pg-tls-reload-'));
const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'client.pem'), key: join(dir, 'client-key.pem') };
let postgres: OwnTlsPostgres;
let opened: Opened<AuditLog>;
const clients: { certPem: string; keyPem: string }[] = [];

const write = (client: { certPem: string; keyPem: string }) => {
  writeFileSync(files.cert, client.certPem, { mode: 0o600 });
  writeFileSync(files.key, client.keyPem, { mode: 0o600 });
};

beforeAll(async () => {
  const ca = await createCa({ commonName: 'stores CA' });
  const server = await issueServerCertificate(ca);
  for (const commonName of ['case-read-a', 'case-read-b'])
    clients.push(await issueClientCertificate(ca, { commonName }));
  writeFileSync(files.ca, ca.certPem);
  write(clients[0] as { certPem: string; keyPem: string });
  postgres = await OwnTlsPostgres.startWithPki({ ca, server }, { clientCert: 'verify-ca' });
  const url = `${postgres.url}?schema=tls_reload&sslmode=verify-full&sslrootcert=${files.ca}&sslcert=${files.cert}&sslkey=${files.key}`;
  const store = await postgresStores.audit?.open(url, testContext, { create: true });
  if (!store) throw new Error('postgres cannot hold the audit trail');
  opened = store;
}, 90_000);

afterAll(async () => {
  await opened?.close();
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The subject the server saw on a new connection the store makes (its archive lock's own). */
async function presented(probe: string): Promise<string> {
  const taken = await opened.value.lockArchive(probe);
  if (!('held' in taken)) throw new Error('the lock was not free');
  try {
    const { rows } = await postgres.adminQuery(
      `SELECT s.client_dn FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'case-read audit archive: ${probe}'`,
    );
    return String(rows[0]?.client_dn ?? '');
  } finally {
    await taken.held.release();
  }
}

describe('a PostgreSQL store’s client certificate, reloaded', () => {
  it('watches the CA, certificate and key files, and says which certificate is in use', () => {
    expect(opened.tls?.files).toEqual([files.ca, files.cert, files.key]);
    expect(opened.tls?.name).toBe('postgres-audit-store-client');
    expect(opened.tls?.current()?.subject).toBe('case-read-a');
  });

  it('new connections present the certificate reloaded; files that do not go together keep the one in use', async () => {
    expect(await presented('probe-1')).toMatch(/CN=case-read-a/);
    write(clients[1] as { certPem: string; keyPem: string });
    expect((await opened.tls?.reload())?.subject).toBe('case-read-b');
    expect(await presented('probe-2')).toMatch(/CN=case-read-b/);
    // The certificate of one client with the key of the other: refused, naming the parameter.
    writeFileSync(files.key, (clients[0] as { keyPem: string }).keyPem, { mode: 0o600 });
    await expect(Promise.resolve().then(() => opened.tls?.reload())).rejects.toThrow(
      /sslkey: is not the key of the certificate in sslcert/,
    );
    expect(opened.tls?.current()?.subject).toBe('case-read-b');
    expect(await presented('probe-3')).toMatch(/CN=case-read-b/);
  });
});
