import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisSettings } from '../../../src/adapters/redis/settings.js';
import { readRedisTls, reloadRedisTls } from '../../../src/adapters/redis/tls.js';
import { createCa, issueClientCertificate } from '../../../src/adapters/x509/pki.js';
import { StoreError } from '../../../src/ports/stores.js';

/**
 * `RATE_LIMIT_TLS_CA`, `_CERT` and `_KEY`, read as every named file is (decisions §20): a
 * FIFO or a device refused naming the variable, never waited on, at start and at a reload
 * (whose read never blocks the event loop); the key refused when others may read or write it.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-redis-tls-files-'));
const files = {
  ca: join(dir, 'ca.pem'),
  cert: join(dir, 'client.pem'),
  key: join(dir, 'key.pem'),
  fifo: join(dir, 'a.fifo'),
};

beforeAll(async () => {
  const ca = await createCa({ commonName: 'redis CA' });
  const client = await issueClientCertificate(ca, { commonName: 'case-read' });
  writeFileSync(files.ca, ca.certPem);
  writeFileSync(files.cert, client.certPem);
  writeFileSync(files.key, client.keyPem, { mode: 0o600 });
  expect(spawnSync('mkfifo', [files.fifo]).status).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settingsOf = (overrides: Partial<RedisSettings> = {}): RedisSettings => ({
  prefix: 'rl',
  timeoutMs: 1000,
  onStoreFailure: 'deny',
  tlsCaFile: files.ca,
  tlsCertFile: files.cert,
  tlsKeyFile: files.key,
  ...overrides,
});

const FORMS = {
  start: (settings: RedisSettings) => {
    try {
      return Promise.resolve(readRedisTls(settings));
    } catch (error) {
      return Promise.reject(error);
    }
  },
  reload: (settings: RedisSettings) => reloadRedisTls(settings),
};

describe.each(Object.entries(FORMS))('RATE_LIMIT_TLS_*, read at %s', (form, read) => {
  it('reads the CA, the certificate and the key', async () => {
    expect((await read(settingsOf())).inUse?.subject).toBe('case-read');
  });

  // A FIFO only to the reload's read (see test/adapters/postgres/tls-files.test.ts).
  const [odd, oddKind] = form === 'reload' ? [files.fifo, 'a FIFO'] : [dir, 'a directory'];

  it.each([
    ['RATE_LIMIT_TLS_CA', 'tlsCaFile', odd, oddKind],
    ['RATE_LIMIT_TLS_CERT', 'tlsCertFile', '/dev/null', 'a character device'],
    ['RATE_LIMIT_TLS_KEY', 'tlsKeyFile', odd, oddKind],
  ] as const)('refuses %s that is not a regular file', async (variable, setting, path, kind) => {
    const reading = read(settingsOf({ [setting]: path }));
    await expect(reading).rejects.toBeInstanceOf(StoreError);
    await expect(reading).rejects.toThrow(`${variable}: ${path} is not a regular file (${kind})`);
  });

  it('refuses a key others may write (0602), and takes one its group may read (0640)', async () => {
    chmodSync(files.key, 0o602);
    await expect(read(settingsOf())).rejects.toThrow(
      `RATE_LIMIT_TLS_KEY: ${files.key} is writable by others (mode 0602)`,
    );
    chmodSync(files.key, 0o640);
    expect((await read(settingsOf())).inUse?.subject).toBe('case-read');
    chmodSync(files.key, 0o600);
  });
});
