import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_ISSUER } from '../../../src/adapters/jose/dev-issuer.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import {
  mintTestToken,
  type RunningTestService,
  startTestService,
  TEST_ISSUER,
} from '../../support/service.js';

const DAY = 86_400_000;
let pki: TestPki;
let service: RunningTestService;
let good: ClientCredentials;
let revokedOnCrl: ClientCredentials;
let key: string;
let token: string;

beforeAll(async () => {
  pki = await makeTestPki();
  good = await makeClient('client-a');
  revokedOnCrl = await makeClient('client-a');
  service = await startTestService(pki, { crl: await pki.crl([revokedOnCrl.serialNumber]) });
  await service.directory.saveClient(AccessMother.client('client-a'));
  key = (await service.issueKey('client-a')).key;
  token = await mintTestToken(pki, 'client-a');
  expect(DEV_ISSUER).not.toBe(TEST_ISSUER);
});
afterAll(async () => {
  await service.close();
  pki.cleanup();
});

function makeClient(cn: string, options: Parameters<TestPki['client']>[1] = {}) {
  return pki.client(cn, options);
}

const call = (credentials?: { certPem: string; keyPem: string }) =>
  httpsRequest(`${service.url}/case/X123456/home-office-interest`, {
    ca: pki.ca.certPem,
    ...(credentials ? { cert: credentials.certPem, key: credentials.keyPem } : {}),
    headers: { 'x-api-key': key, authorization: `Bearer ${token}` },
  });

describe('the mutual-TLS handshake', () => {
  it('a valid client certificate, key and token → 200', async () => {
    const response = await call(good);
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({ exists: true, notes: expect.any(String) });
  });

  it('no client certificate → the connection fails, no HTTP response', async () => {
    await expect(call()).rejects.toThrow();
  });

  it('a certificate from another CA → the connection fails', async () => {
    await expect(call(await makeClient('client-a', { ca: pki.otherCa }))).rejects.toThrow();
  });

  it('an expired certificate → the connection fails', async () => {
    const expired = await makeClient('client-a', {
      notBefore: new Date(Date.now() - 30 * DAY),
      notAfter: new Date(Date.now() - DAY),
    });
    await expect(call(expired)).rejects.toThrow();
  });

  it('a certificate not yet valid → the connection fails', async () => {
    const future = await makeClient('client-a', {
      notBefore: new Date(Date.now() + DAY),
      notAfter: new Date(Date.now() + 30 * DAY),
    });
    await expect(call(future)).rejects.toThrow();
  });

  it('a certificate on the CRL → the connection fails', async () => {
    await expect(call(revokedOnCrl)).rejects.toThrow();
  });

  it('refuses TLS 1.1 and older', async () => {
    const { connect } = await import('node:tls');
    const { port } = new URL(service.url);
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect({
        host: '127.0.0.1',
        port: Number(port),
        ca: pki.ca.certPem,
        cert: good.certPem,
        key: good.keyPem,
        servername: 'localhost',
        minVersion: 'TLSv1',
        maxVersion: 'TLSv1.1',
      });
      socket.on('secureConnect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', (error) => resolve(`refused: ${error.message}`));
    });
    expect(outcome).toMatch(/^refused/);
  });
});

describe('response headers on the wire, through the Node listener', () => {
  // The OWASP REST Security set (decisions §16), nothing for browsers.
  const SECURITY = {
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'strict-transport-security': 'max-age=31536000',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  };
  // What only a browser reads: none may come back from the API.
  const BROWSER_ONLY = [
    'cross-origin-embedder-policy',
    'cross-origin-opener-policy',
    'cross-origin-resource-policy',
    'origin-agent-cluster',
    'referrer-policy',
    'x-dns-prefetch-control',
    'x-download-options',
    'x-permitted-cross-domain-policies',
    'x-xss-protection',
  ];
  // What Node's HTTP server adds whatever the app sets (each request here closes its connection).
  const TRANSPORT = ['connection', 'date'];
  const get = (path: string, headers: Record<string, string>) =>
    httpsRequest(`${service.url}${path}`, {
      ca: pki.ca.certPem,
      cert: good.certPem,
      key: good.keyPem,
      headers,
    });

  it.each([
    ['a case', '/case/X123456', true, 200, 'application/json'],
    ['no API key', '/case/X123456', false, 403, 'application/problem+json'],
    ['an unknown case', '/case/Q000000', true, 404, 'application/problem+json'],
    ['no such path', '/nowhere', true, 404, 'application/problem+json'],
  ])(
    '%s: the whole security set, a request id, content type and length',
    async (_label, path, withKey, status, type) => {
      const response = await get(path, withKey ? { 'x-api-key': key, authorization: `Bearer ${token}` } : {});
      expect(response.status).toBe(status);
      expect(response.headers).toMatchObject({
        ...SECURITY,
        'content-type': type,
        'content-length': String(Buffer.byteLength(response.text)),
        'x-request-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      // Past the API key, the rate-limit fields too.
      if (withKey) expect(response.headers.ratelimit).toMatch(/^"per-api-key";r=\d+;t=\d+$/);
      if (withKey) expect(response.headers['ratelimit-policy']).toMatch(/^"per-api-key";q=\d+;w=\d+$/);
      // Exactly these: the set, the body's type and length, the request id, the rate-limit
      // fields past the API key, and the transport's own.
      const expected = [
        ...Object.keys(SECURITY),
        'content-type',
        'content-length',
        'x-request-id',
        ...(withKey ? ['ratelimit', 'ratelimit-policy'] : []),
        ...TRANSPORT,
      ];
      expect(Object.keys(response.headers).sort()).toEqual(expected.sort());
      for (const name of BROWSER_ONLY) expect(response.headers[name], name).toBeUndefined();
    },
  );
});
