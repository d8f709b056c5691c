import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamStores } from '../../../src/adapters/upstream/store-kind.js';
import { Crn } from '../../../src/domain/crn.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import type { Opened } from '../../../src/ports/stores.js';
import { fixtureCases } from '../../support/fixtures.js';
import { testContext } from '../../support/stores.js';
import { startUpstreamInstance, type UpstreamInstance, upstreamSettings } from '../../support/upstream.js';

/**
 * The upstream's client certificate rotated without a restart (decisions §10): `reload`
 * reads `UPSTREAM_TLS_*` again, checks them and presents the new certificate on new
 * connections; a set that is not usable is refused and the one in use stays.
 */
let upstream: UpstreamInstance;
let store: Opened<CaseRepository>;
const crn = Crn.parse('X123456');

beforeAll(async () => {
  upstream = await startUpstreamInstance(fixtureCases());
  const opened = await upstreamStores.cases?.open(upstream.url, {
    ...testContext,
    settings: upstreamSettings(upstream),
  });
  if (!opened) throw new Error('no upstream store');
  store = opened;
});
afterAll(async () => {
  await store?.close();
  await upstream?.close();
});

describe('the upstream client certificate, reloaded', () => {
  it('presents the new certificate from the next connection, once the old one is revoked upstream', async () => {
    const first = store.tls?.current();
    expect(store.tls?.name).toBe('upstream-client');
    expect(store.tls?.files).toEqual([upstream.files.cert, upstream.files.key, upstream.files.ca]);
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();

    const next = await upstream.pki.client('case-reader');
    writeFileSync(upstream.files.cert, next.certPem);
    writeFileSync(upstream.files.key, next.keyPem);
    // Revoked upstream: a call that still presented it would be refused.
    await upstream.service.directory.revokeCertificate({
      serialNumber: first?.serialNumber ?? '',
      clientId: null,
      revokedAt: new Date(),
    });
    const now = await store.tls?.reload();
    expect(now?.serialNumber).toBe(next.serialNumber);
    expect(now?.serialNumber).not.toBe(first?.serialNumber);
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
  });

  it('refuses a key that is not the certificate’s, and goes on with the set in use', async () => {
    const inUse = store.tls?.current();
    const other = await upstream.pki.client('case-reader');
    writeFileSync(upstream.files.key, other.keyPem);
    await expect(Promise.resolve().then(() => store.tls?.reload())).rejects.toThrow(
      'UPSTREAM_TLS_KEY: is not the key of the certificate in UPSTREAM_TLS_CERT',
    );
    expect(store.tls?.current()).toEqual(inUse);
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
  });

  it('refuses a new pair whose key others can read (mode 0644), and goes on with the set in use', async () => {
    const inUse = store.tls?.current();
    const next = await upstream.pki.client('case-reader');
    writeFileSync(upstream.files.cert, next.certPem);
    // Replaced as a secret volume at Kubernetes' default mode would replace it.
    rmSync(upstream.files.key);
    writeFileSync(upstream.files.key, next.keyPem, { mode: 0o644 });
    chmodSync(upstream.files.key, 0o644);
    await expect(Promise.resolve().then(() => store.tls?.reload())).rejects.toThrow(
      `UPSTREAM_TLS_KEY: ${upstream.files.key} is readable by others (mode 0644); make it 0640 or 0600 (on Kubernetes: defaultMode: 0440 on the secret volume; the default is 0644)`,
    );
    expect(store.tls?.current()).toEqual(inUse);
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
    // Group-readable is allowed: the same pair is then loaded.
    chmodSync(upstream.files.key, 0o640);
    expect((await store.tls?.reload())?.serialNumber).toBe(next.serialNumber);
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
  });
});
