import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamSettings } from '../../../src/adapters/upstream/settings.js';
import { upstreamStores } from '../../../src/adapters/upstream/store-kind.js';
import { type Ca, createCa, type Issued, issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { CertificateSerial } from '../../../src/domain/access/certificate-serial.js';
import { Crn } from '../../../src/domain/crn.js';
import { UpstreamFailedError } from '../../../src/domain/errors.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import type { Opened } from '../../../src/ports/stores.js';
import { fixtureCases } from '../../support/fixtures.js';
import { mintTestToken } from '../../support/service.js';
import { testContext } from '../../support/stores.js';
import { startUpstreamInstance, type UpstreamInstance, upstreamSettings } from '../../support/upstream.js';

/**
 * The token endpoint (`UPSTREAM_TOKEN_URL`) is reached like the upstream (issue 55, item 7;
 * decisions §17, §20): verified with `UPSTREAM_TLS_CA`, or with `UPSTREAM_TOKEN_TLS_CA` when
 * set, presented the client certificate `UPSTREAM_TLS_CERT` when it asks for one, never
 * trusted on `NODE_TLS_REJECT_UNAUTHORIZED=0`, and given the new files at a reload.
 *
 * The upstream is a second instance of this service behind its private CA, asking for a
 * client certificate; the token endpoint a stand-in that, like an identity provider behind the
 * same PKI, asks for a client certificate of that CA and refuses a handshake without one.
 */
let upstream: UpstreamInstance;
let endpoint: Server;
let tokenUrl: string;
let dir: string;
let secretFile: string;
/** The serial of the client certificate each token request came with, in order. */
const presented: string[] = [];
const crn = Crn.parse('X123456');
const opened: Opened<CaseRepository>[] = [];

/** What a server presents: its certificate and key. */
const servedBy = (issued: Issued) => ({ cert: issued.certPem, key: issued.keyPem });
/** The token endpoint now serves this certificate (its client verification unchanged). */
const serveWith = (issued: Issued) =>
  endpoint.setSecureContext({ ...servedBy(issued), ca: upstream.pki.ca.certPem });
const file = (name: string, content: string) => {
  const where = join(dir, name);
  writeFileSync(where, content, { mode: 0o600 });
  return where;
};

beforeAll(async () => {
  upstream = await startUpstreamInstance(fixtureCases());
  dir = mkdtempSync(join(tmpdir(), 'case-read-token-tls-'));
  secretFile = file('client-secret', 'client-secret-value');
  // A token the upstream instance takes, as an identity provider it trusts would issue.
  const token = await mintTestToken(upstream.pki, 'case-reader', { expiresInSeconds: 3600 });
  endpoint = createServer(
    {
      ...servedBy(upstream.pki.server),
      ca: upstream.pki.ca.certPem,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      presented.push(CertificateSerial.parse(peer.serialNumber).toString());
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
    },
  );
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  tokenUrl = `https://localhost:${(endpoint.address() as AddressInfo).port}/oauth2/token`;
}, 30_000);
afterEach(async () => {
  delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  presented.length = 0;
  for (const store of opened.splice(0)) await store.close();
  endpoint.closeAllConnections();
  serveWith(upstream.pki.server);
});
afterAll(async () => {
  endpoint?.closeAllConnections();
  await new Promise((resolve) => endpoint?.close(resolve));
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The upstream store with OAuth2 client credentials (no static bearer), and `overrides`;
 * without `UPSTREAM_TLS_CERT`/`UPSTREAM_TLS_KEY` when `clientCertificate` is false.
 */
async function openStore(
  overrides: Partial<UpstreamSettings> = {},
  { clientCertificate = true } = {},
): Promise<Opened<CaseRepository>> {
  const { bearerFile: _static, tlsCertFile, tlsKeyFile, ...settings } = upstreamSettings(upstream);
  const client = clientCertificate && tlsCertFile && tlsKeyFile ? { tlsCertFile, tlsKeyFile } : {};
  const store = await upstreamStores.cases?.open(upstream.url, {
    ...testContext,
    settings: {
      ...settings,
      ...client,
      retries: 0,
      tokenUrl,
      clientId: 'case-read',
      clientSecretFile: secretFile,
      ...overrides,
    },
  });
  if (!store) throw new Error('no upstream store');
  opened.push(store);
  return store;
}

/** A server certificate of a CA that is neither the upstream's nor a public one. */
async function otherCa(): Promise<{ ca: Ca; server: Issued }> {
  const ca = await createCa({ commonName: 'identity provider CA' });
  return { ca, server: await issueServerCertificate(ca) };
}

const refusalOf = (read: Promise<unknown>) =>
  read.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('the token endpoint, verified and presented the client certificate as the upstream is', () => {
  it('behind the upstream’s private CA (UPSTREAM_TLS_CA), asking for a client certificate: the read succeeds, and it saw the store’s', async () => {
    const store = await openStore();
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
    expect(presented).toEqual([store.tls?.current()?.serialNumber]);
  });

  it('behind a CA of its own, given as UPSTREAM_TOKEN_TLS_CA: the read succeeds, the upstream still verified with UPSTREAM_TLS_CA', async () => {
    const idp = await otherCa();
    serveWith(idp.server);
    const store = await openStore({ tokenTlsCa: file('idp-ca.pem', idp.ca.certPem) });
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
    expect(presented).toEqual([store.tls?.current()?.serialNumber]);
  });

  it('UPSTREAM_TOKEN_TLS_CA replaces UPSTREAM_TLS_CA for the token endpoint, it does not add to it', async () => {
    const idp = await otherCa();
    const store = await openStore({ tokenTlsCa: file('idp-ca.pem', idp.ca.certPem) });
    const refused = await refusalOf(store.value.findHomeOfficeInterest(crn));
    expect(refused).toBeInstanceOf(UpstreamFailedError);
    expect(refused).toMatchObject({ logLabel: 'token-endpoint-untrusted' });
    expect(presented).toEqual([]);
  });

  it.each([
    ['no CA of its own', {}],
    ['UPSTREAM_TOKEN_TLS_CA=system (the public CAs)', { tokenTlsCa: 'system' }],
  ])(
    'a token endpoint whose certificate no given CA signed is refused (%s), before the secret is sent, NODE_TLS_REJECT_UNAUTHORIZED=0 or not',
    async (_what, overrides) => {
      const idp = await otherCa();
      serveWith(idp.server);
      for (const unverified of [false, true]) {
        if (unverified) process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
        const store = await openStore(overrides);
        const refused = await refusalOf(store.value.findHomeOfficeInterest(crn));
        expect(refused, `NODE_TLS_REJECT_UNAUTHORIZED=0: ${unverified}`).toBeInstanceOf(UpstreamFailedError);
        expect(refused).toMatchObject({
          logLabel: 'token-endpoint-untrusted',
          // The verifier's code for a chain it cannot build: Node's and Bun's name, then Deno's.
          mismatch: {
            field: '(certificate)',
            reason: expect.stringMatching(/^UNABLE_TO_(VERIFY_LEAF_SIGNATURE|GET_ISSUER_CERT_LOCALLY)$/),
          },
        });
        expect(JSON.stringify(refused)).not.toContain('client-secret-value');
      }
      expect(presented).toEqual([]);
    },
  );

  it('a token endpoint that asks for a client certificate the store has none of refuses the handshake: a 502, never a token', async () => {
    const store = await openStore({}, { clientCertificate: false });
    const refused = await refusalOf(store.value.findHomeOfficeInterest(crn));
    expect(refused).toBeInstanceOf(UpstreamFailedError);
    expect(refused).toMatchObject({ logLabel: 'token-endpoint-unreachable' });
    expect(presented).toEqual([]);
  });

  it('the upstream itself: a certificate no given CA signed is refused with NODE_TLS_REJECT_UNAUTHORIZED=0 too', async () => {
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    // Its static bearer kept: only the CA is missing, so the read would otherwise succeed.
    const { tlsCaFile: _ca, ...settings } = upstreamSettings(upstream);
    const store = await upstreamStores.cases?.open(upstream.url, {
      ...testContext,
      settings: { ...settings, retries: 0 },
    });
    if (!store) throw new Error('no upstream store');
    opened.push(store);
    const refused = await refusalOf(store.value.findHomeOfficeInterest(crn));
    expect(refused).toBeInstanceOf(UpstreamFailedError);
    expect(refused).toMatchObject({ logLabel: 'connection' });
  });
});

describe('the token endpoint at a reload of the upstream’s TLS files', () => {
  it('a rotated client certificate: the next token is fetched presenting the new one', async () => {
    const store = await openStore();
    const first = store.tls?.current()?.serialNumber;
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
    // One token for both reads, fetched with the first certificate.
    expect(presented).toEqual([first]);

    const next = await upstream.pki.client('case-reader');
    writeFileSync(upstream.files.cert, next.certPem);
    writeFileSync(upstream.files.key, next.keyPem);
    expect((await store.tls?.reload())?.serialNumber).toBe(next.serialNumber);
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
    expect(presented).toEqual([first, next.serialNumber]);
  });

  it('UPSTREAM_TOKEN_TLS_CA is one of the files watched, and a new CA there is used for the next token', async () => {
    const before = await otherCa();
    serveWith(before.server);
    const caFile = file('idp-ca-rotating.pem', before.ca.certPem);
    const store = await openStore({ tokenTlsCa: caFile });
    expect(store.tls?.files).toContain(caFile);
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();

    // The identity provider moves to a new CA; the secret volume follows.
    const after = await otherCa();
    serveWith(after.server);
    endpoint.closeAllConnections();
    writeFileSync(caFile, after.ca.certPem);
    await store.tls?.reload();
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
    expect(presented).toHaveLength(2);
  });

  it('a token CA file that is not a certificate bundle is refused at a reload, naming the variable; the set in use stays', async () => {
    const idp = await otherCa();
    serveWith(idp.server);
    const caFile = file('idp-ca-broken.pem', idp.ca.certPem);
    const store = await openStore({ tokenTlsCa: caFile });
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
    writeFileSync(caFile, 'not a certificate');
    await expect(Promise.resolve().then(() => store.tls?.reload())).rejects.toThrow(
      /^UPSTREAM_TOKEN_TLS_CA: /,
    );
    expect(await store.value.findHomeOfficeInterest(crn)).toBeDefined();
  });
});
