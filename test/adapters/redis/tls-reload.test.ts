import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStores } from '../../../src/adapters/redis/store-kind.js';
import {
  type Ca,
  createCa,
  issueClientCertificate,
  issueServerCertificate,
} from '../../../src/adapters/x509/pki.js';
import { StoreUnavailableError } from '../../../src/domain/errors.js';
import type { RateLimiter } from '../../../src/ports/rate-limiter.js';
import type { Opened } from '../../../src/ports/stores.js';
import { uniquePrefix } from '../../support/redis.js';
import { makeRedisContext } from '../../support/stores.js';
import { OwnTlsRedis } from '../../support/tls-redis.js';

/**
 * The rate-limit store's client certificate and CA (`RATE_LIMIT_TLS_*`), reloaded like the
 * upstream's: `reload` reads them again, checks them and uses them for new connections; a set
 * that is not usable is refused and the one in use stays.
 */
const dir = mkdtempSync(join(tmpdir(), 'case-read-redis-tls-'));
const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'client.pem'), key: join(dir, 'client-key.pem') };
const quota = { limit: 1000, windowMs: 60_000 };
let ca: Ca;
let otherCa: Ca;
let redis: OwnTlsRedis;
let store: Opened<RateLimiter>;

const put = (issued: { certPem: string; keyPem: string }) => {
  writeFileSync(files.cert, issued.certPem, { mode: 0o600 });
  writeFileSync(files.key, issued.keyPem, { mode: 0o600 });
};

/** Drops the limiter's connection from the server side: the next command goes over a new one. */
async function dropConnections(): Promise<void> {
  const admin = new Redis(redis.url, {
    tls: {
      ca: ca.certPem,
      ...(await issueClientCertificate(ca, { commonName: 'admin' }).then((c) => ({
        cert: c.certPem,
        key: c.keyPem,
      }))),
    },
    lazyConnect: true,
  });
  await admin.connect();
  // Two filters in one CLIENT KILL: ioredis 6's typed `client()` takes one, `call` sends it as is.
  await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  admin.disconnect();
}

/** Whether the server has refused a client certificate since its log's line `line`. */
const refusedSince = (line: number) =>
  redis.log
    .split('\n')
    .slice(line - 1)
    .some((l) => /unknown ca|certificate verify failed/i.test(l));

/** Consumes until an answer comes from a connection made since (the client reconnects within a second). */
async function consumeAfterReconnect(): Promise<unknown> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await store.value.consume('k', quota, new Date());
    } catch (error) {
      if (Date.now() > deadline) return error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

beforeAll(async () => {
  ca = await createCa({ commonName: 'redis CA' });
  otherCa = await createCa({ commonName: 'some other CA' });
  writeFileSync(files.ca, ca.certPem);
  put(await issueClientCertificate(ca, { commonName: 'case-read' }));
  redis = await OwnTlsRedis.startWithPki(
    { ca, server: await issueServerCertificate(ca) },
    { authClients: 'yes' },
  );
  const { context } = makeRedisContext({
    prefix: uniquePrefix('tls-reload'),
    onStoreFailure: 'deny',
    timeoutMs: 2000,
    tlsCaFile: files.ca,
    tlsCertFile: files.cert,
    tlsKeyFile: files.key,
  });
  const opened = await redisStores.rateLimit?.open(redis.url, context);
  if (!opened) throw new Error('redis cannot count requests');
  store = opened;
}, 30_000);

afterAll(async () => {
  await store?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the rate-limit store client certificate, reloaded', () => {
  it('is watched, and a new one is presented from the next connection', async () => {
    expect(store.tls?.name).toBe('rate-limit-client');
    expect(store.tls?.files).toEqual([files.ca, files.cert, files.key]);
    const first = store.tls?.current();
    expect((await store.value.consume('k', quota, new Date())).allowed).toBe(true);

    // A certificate of a CA the server does not trust: from the next connection, refused.
    put(await issueClientCertificate(otherCa, { commonName: 'case-read' }));
    const foreign = await store.tls?.reload();
    expect(foreign?.serialNumber).not.toBe(first?.serialNumber);
    await dropConnections();
    // Each try is refused until the server has turned the new certificate away, and after.
    const handshakes = redis.log.split('\n').length;
    while (!refusedSince(handshakes)) {
      await expect(store.value.consume('k', quota, new Date())).rejects.toBeInstanceOf(StoreUnavailableError);
      await new Promise((r) => setTimeout(r, 100));
    }
    await expect(store.value.consume('k', quota, new Date())).rejects.toBeInstanceOf(StoreUnavailableError);

    // The CA's own again: the store counts again, over a new connection with it.
    const next = await issueClientCertificate(ca, { commonName: 'case-read' });
    put(next);
    expect((await store.tls?.reload())?.serialNumber).toBe(next.serialNumber);
    const answer = await consumeAfterReconnect();
    expect(answer).toMatchObject({ allowed: true });
  }, 30_000);

  it('refuses a key that is not the certificate’s, and goes on with the set in use', async () => {
    const inUse = store.tls?.current();
    writeFileSync(files.key, (await issueClientCertificate(ca, { commonName: 'x' })).keyPem, { mode: 0o600 });
    await expect(Promise.resolve().then(() => store.tls?.reload())).rejects.toThrow(
      'RATE_LIMIT_TLS_KEY: is not the key of the certificate in RATE_LIMIT_TLS_CERT',
    );
    expect(store.tls?.current()).toEqual(inUse);
    // Nor a key readable by others, even the right one.
    put(await issueClientCertificate(ca, { commonName: 'case-read' }));
    chmodSync(files.key, 0o644);
    await expect(Promise.resolve().then(() => store.tls?.reload())).rejects.toThrow(
      `RATE_LIMIT_TLS_KEY: ${files.key} is readable by others (mode 0644)`,
    );
    expect(store.tls?.current()).toEqual(inUse);
    await dropConnections();
    expect(await consumeAfterReconnect()).toMatchObject({ allowed: true });
  }, 30_000);
});
