import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPostgresTls, reloadPostgresTls } from '../../../src/adapters/postgres/tls.js';
import type { PostgresTls } from '../../../src/adapters/postgres/url.js';
import { createCa, issueClientCertificate } from '../../../src/adapters/x509/pki.js';
import { StoreError } from '../../../src/ports/stores.js';

/**
 * A PostgreSQL URL's `sslrootcert`, `sslcert` and `sslkey`, read as every named file is
 * (decisions §20): a FIFO, a directory or a device is refused naming the store and the
 * parameter, never waited on, at start and at a reload; the reload's read never blocks the
 * event loop and gives what the start's does; the key refused when others may read or write it.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-pg-tls-files-'));
const files = {
  ca: join(dir, 'ca.pem'),
  cert: join(dir, 'client.pem'),
  key: join(dir, 'client-key.pem'),
  fifo: join(dir, 'a.fifo'),
  folder: join(dir, 'a-folder'),
};

beforeAll(async () => {
  const ca = await createCa({ commonName: 'stores CA' });
  const client = await issueClientCertificate(ca, { commonName: 'case-read' });
  writeFileSync(files.ca, ca.certPem);
  writeFileSync(files.cert, client.certPem);
  writeFileSync(files.key, client.keyPem, { mode: 0o600 });
  expect(spawnSync('mkfifo', [files.fifo]).status).toBe(0);
  mkdirSync(files.folder);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tlsOf = (overrides: Partial<PostgresTls> = {}): PostgresTls => ({
  assurance: 'verify-full',
  rootCert: files.ca,
  cert: files.cert,
  key: files.key,
  ...overrides,
});

/** Both reads, each giving what it read or the error it threw. */
const FORMS = {
  start: (tls: PostgresTls) => {
    try {
      return Promise.resolve(readPostgresTls('access store', tls));
    } catch (error) {
      return Promise.reject(error);
    }
  },
  reload: (tls: PostgresTls) => reloadPostgresTls('access store', tls),
};

describe.each(Object.entries(FORMS))('the store’s TLS files, read at %s', (form, read) => {
  it('reads the CA, the certificate and the key, and says which certificate they present', async () => {
    const { ssl, inUse } = await read(tlsOf());
    expect(ssl === false ? 'no TLS' : ssl.rejectUnauthorized).toBe(true);
    expect(inUse?.subject).toBe('case-read');
  });

  // A FIFO only to the reload's read, which (were it to wait) would hold a thread of libuv's
  // pool and not this one: the start's read of a FIFO is tried in a process of its own
  // (test/adapters/shared/named-files.test.ts, test/e2e/named-files.test.ts).
  const [odd, oddKind] =
    form === 'reload' ? (['fifo', 'a FIFO'] as const) : (['folder', 'a directory'] as const);

  it.each([
    ['sslrootcert', 'rootCert', odd, oddKind, 'access store: sslrootcert'],
    ['sslcert', 'cert', 'folder', 'a directory', 'access store: sslcert'],
    ['sslkey', 'key', odd, oddKind, 'access store sslkey:'],
    ['sslkey', 'key', '/dev/null', 'a character device', 'access store sslkey:'],
  ] as const)('refuses %s that is not a regular file (%s, %s)', async (_, parameter, given, kind, label) => {
    const path = given === '/dev/null' ? given : files[given];
    const reading = read(tlsOf({ [parameter]: path }));
    await expect(reading).rejects.toBeInstanceOf(StoreError);
    await expect(reading).rejects.toThrow(`${label} ${path} is not a regular file (${kind})`);
  });

  it('refuses a key others may write (0602), and takes one its group may read (0640)', async () => {
    chmodSync(files.key, 0o602);
    await expect(read(tlsOf())).rejects.toThrow(
      `access store sslkey: ${files.key} is writable by others (mode 0602)`,
    );
    chmodSync(files.key, 0o640);
    expect((await read(tlsOf())).inUse?.subject).toBe('case-read');
    chmodSync(files.key, 0o600);
  });
});
