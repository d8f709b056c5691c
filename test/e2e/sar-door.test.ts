import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  hmacToken,
  type JwksServer,
  SAR_CLIENT,
  SAR_ISSUER,
  SAR_ROLE,
  type SigningKey,
  sarToken,
  signingKey,
  startJwksServer,
  unsignedToken,
} from '../support/authorisation-server.js';
import {
  prepareServe,
  ROOT,
  runCliInProcess,
  type ServeSetup,
  startServe,
  stopChildren,
} from '../support/cli.js';
import { type HttpsResponse, httpsRequest } from '../support/https-client.js';
import { makeTestPki, type TestPki } from '../support/pki.js';
import { windowWithRoom } from '../support/windows.js';

/**
 * The SAR service's door against a real `serve` (decisions §23): `SAR_PORT`, TLS with the
 * service's certificate and no client certificate asked; the organisation's authorisation
 * server's key set over HTTPS, its certificate from a CA of its own that the service is given
 * as every hop's private CA is (NODE_EXTRA_CA_CERTS); RS256 client-credentials tokens as it
 * mints them. The two routes answered with the role, every refusal, nothing else served, the
 * trail naming the token's client, a rate limit per client, the main listener's route
 * unchanged; then a second `serve` with another role and a key set that cannot be had at first.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-sar-door-'));
let setup: ServeSetup;
let env: Record<string, string>;
let authority: TestPki;
let key: SigningKey;
let jwks: JwksServer;
let server: Awaited<ReturnType<typeof startServe>>;
/** The main listener's client holding the SAR permissions, with its certificate and key. */
let mtls: { cert: string; key: string; apiKey: string };

const TEMPLATE = readFileSync(join(ROOT, 'templates/subject-access-request.mustache'), 'utf8');

/** Every token sent to the door: none of it may be in serve's log. */
const sent: string[] = [];

/** A request to the door: no client certificate, the token if given. */
function door(path: string, token?: string): Promise<HttpsResponse> {
  if (server.sarUrl === undefined) throw new Error('serve started no SAR door');
  if (token !== undefined) sent.push(token);
  return httpsRequest(`${server.sarUrl.replace('127.0.0.1', 'localhost')}${path}`, {
    ca: setup.ca,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
}

/** The audit records of one request, as `audit query` prints them. */
async function recordsOf(response: HttpsResponse): Promise<Record<string, unknown>[]> {
  const id = String(response.headers['x-request-id']);
  const result = await runCliInProcess(['audit', 'query', '--request-id', id, '--json'], env);
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>[];
}

const problemType = (response: HttpsResponse) => (response.json() as { type: string }).type;

/** Resolves once serve has logged a line holding `text` (its log is written asynchronously); rejects after 20 s. */
function logged(text: string): Promise<void> {
  if (server.output().includes(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve never logged ${text}`)), 20_000);
    const onData = () => {
      if (!server.output().includes(text)) return;
      clearTimeout(timer);
      server.child.stdout?.off('data', onData);
      resolve();
    };
    server.child.stdout?.on('data', onData);
  });
}

beforeAll(async () => {
  setup = prepareServe(dir);
  setup.cli('audit', 'keygen', '--dir', join(dir, 'keys'));
  const files = JSON.parse(setup.cli('pki', 'client', 'sar-mtls', '--dir', join(dir, 'pki'), '--json')) as {
    cert: string;
    key: string;
  };
  setup.cli(
    'clients',
    'add',
    'sar-mtls',
    '--permissions',
    'getSubjectAccessRequest,getSubjectAccessRequestTemplate',
  );
  mtls = {
    cert: readFileSync(files.cert, 'utf8'),
    key: readFileSync(files.key, 'utf8'),
    apiKey: setup.cli('keys', 'issue', 'sar-mtls').trim(),
  };
  // The authorisation server: a PKI of its own, its CA given to serve as a private CA is.
  authority = await makeTestPki();
  key = await signingKey('as-1');
  jwks = await startJwksServer({ cert: authority.server.certPem, key: authority.server.keyPem }, [key]);
  env = {
    ...setup.env,
    AUDIT_SIGNING_KEY: join(dir, 'keys', 'audit-signing-key.pem'),
    AUDIT_ORIGIN: 'case-read.test.example/audit',
    NODE_EXTRA_CA_CERTS: authority.write('authority-ca.pem', authority.ca.certPem),
    SAR_PORT: '0',
    SAR_AUTH_JWKS: jwks.url,
    SAR_AUTH_ISSUER: SAR_ISSUER,
    // 20 requests a client in a window with an hour to run: the door's flood below is refused at the 21st.
    RATE_LIMIT_DEFAULT: `20/${windowWithRoom(86_400_000, 3_600_000)}`,
  };
}, 90_000);

afterAll(async () => {
  await jwks.close();
  authority.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('serve with SAR_PORT: the door', () => {
  beforeAll(async () => {
    server = await startServe(env);
  }, 60_000);
  afterAll(() => stopChildren([server.child]));

  it('names the door in its listening line, on a port of its own', () => {
    expect(server.sarUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.sarUrl).not.toBe(server.url);
  });

  it('answers the template and the subject access request with the role, and records the token’s client', async () => {
    const token = await sarToken({ key });
    const template = await door('/subject-access-request/template', token);
    expect(template.status).toBe(200);
    expect(template.headers['content-type']).toMatch(/^text\/plain/);
    expect(template.text).toBe(TEMPLATE);
    // A read of the crn on the main listener, then the SAR of it through the door.
    const read = await httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
      ca: setup.ca,
      ...setup.client,
      headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
    });
    expect(read.status).toBe(200);
    const sar = await door('/subject-access-request?crn=X123456', token);
    expect(sar.status, sar.text).toBe(200);
    expect(sar.headers['content-type']).toMatch(/^application\/json/);
    expect((sar.json() as { content: { crn: string } }).content.crn).toBe('X123456');
    expect(await recordsOf(sar)).toMatchObject([
      {
        clientId: SAR_CLIENT,
        certificateSerial: '',
        operation: 'getSubjectAccessRequest',
        crn: 'X123456',
        status: 200,
      },
    ]);
    expect(await recordsOf(template)).toMatchObject([
      { clientId: SAR_CLIENT, certificateSerial: '', operation: 'getSubjectAccessRequestTemplate' },
    ]);
  });

  it('no token: 401 problem+json with a bare Bearer challenge, and no record', async () => {
    const res = await door('/subject-access-request?crn=X123456');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="case-read-service"');
    expect(await recordsOf(res)).toEqual([]);
  });

  const invalid: [string, () => Promise<string>][] = [
    ['a bad signature', async () => sarToken({ key: await signingKey('as-1') })],
    ['another issuer', () => sarToken({ key, issuer: 'https://elsewhere.example.test' })],
    ['an expired token', () => sarToken({ key, expiresIn: -120 })],
    ['an unknown kid', () => sarToken({ key, kid: 'as-unknown' })],
    ['HS256', () => hmacToken({ client_id: SAR_CLIENT, authorities: [SAR_ROLE] }, 'shared-secret')],
    [
      'alg none',
      async () => unsignedToken({ iss: SAR_ISSUER, client_id: SAR_CLIENT, authorities: [SAR_ROLE] }),
    ],
  ];
  it.each(invalid)('%s: 401 invalid_token, and no record', async (_label, mint) => {
    const res = await door('/subject-access-request?crn=X123456', await mint());
    expect(res.status).toBe(401);
    expect(problemType(res)).toBe('urn:case-read:problem:unauthenticated');
    expect(res.headers['www-authenticate']).toMatch(
      /^Bearer realm="case-read-service", error="invalid_token"/,
    );
    expect(await recordsOf(res)).toEqual([]);
  });

  it('a valid token without the role: 403, recorded to its client', async () => {
    const token = await sarToken({
      key,
      claims: { client_id: 'some-other-service', authorities: ['ROLE_OTHER'] },
    });
    const res = await door('/subject-access-request?crn=X123456', token);
    expect(res.status).toBe(403);
    expect(problemType(res)).toBe('urn:case-read:problem:permission-denied');
    expect(await recordsOf(res)).toMatchObject([
      { clientId: 'some-other-service', certificateSerial: '', status: 403 },
    ]);
  });

  it.each(['/metrics', '/health/ready', '/openapi.json', '/docs', '/case/X123456', '/token'])(
    'serves nothing else: %s is 404 problem+json',
    async (path) => {
      const res = await door(path, await sarToken({ key }));
      expect(res.status).toBe(404);
      expect(problemType(res)).toBe('urn:case-read:problem:not-found');
    },
  );

  it('limits each token client apart: 429 past the quota for one, the other served', async () => {
    const flood = await sarToken({ key, claims: { client_id: 'sar-flood', authorities: [SAR_ROLE] } });
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++)
      statuses.push((await door('/subject-access-request/template', flood)).status);
    expect(statuses).toEqual([...Array(20).fill(200), 429]);
    const limited = await door('/subject-access-request/template', flood);
    expect(limited.status).toBe(429);
    expect(limited.headers.ratelimit).toMatch(/^"per-client";r=0;t=\d+$/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await door('/subject-access-request/template', await sarToken({ key }))).status).toBe(200);
  });

  it('leaves the main listener’s route as it was: a client certificate, an API key and the permission', async () => {
    const main = (headers: Record<string, string>, credentials?: { cert: string; key: string }) =>
      httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/subject-access-request/template`, {
        ca: setup.ca,
        ...(credentials ?? {}),
        headers,
      });
    const token = await sarToken({ key });
    expect((await main({ 'x-api-key': mtls.apiKey }, mtls)).status).toBe(200);
    // The SAR service's token opens nothing there: no certificate, no handshake.
    await expect(main({ authorization: `Bearer ${token}` })).rejects.toThrow();
    expect((await main({ authorization: `Bearer ${token}` }, mtls)).status).toBe(403);
    // A client without the permission.
    expect((await main({ 'x-api-key': setup.apiKey }, setup.client)).status).toBe(403);
  });

  it('logs nothing of a token it was sent', () => {
    expect(sent.length).toBeGreaterThan(30);
    for (const token of sent) {
      for (const part of token.split('.').filter((p) => p.length > 0))
        expect(server.output()).not.toContain(part);
    }
  });

  it('counts the door’s requests on /metrics, by operation and status', async () => {
    const res = await fetch(`${server.managementUrl}/metrics`);
    const text = await res.text();
    expect(text).toMatch(
      /^case_read_http_requests_total\{operation="getSubjectAccessRequest",status="200"\} [1-9]/m,
    );
    expect(text).toMatch(
      /^case_read_http_requests_total\{operation="getSubjectAccessRequest",status="401"\} [1-9]/m,
    );
    expect(text).toMatch(
      /^case_read_http_requests_total\{operation="getSubjectAccessRequestTemplate",status="429"\} [1-9]/m,
    );
  });
});

describe('serve with another SAR_AUTH_ROLE, its key set not to be had at first', () => {
  beforeAll(async () => {
    jwks.answer('drop');
    server = await startServe({ ...env, SAR_AUTH_ROLE: 'ROLE_CASE_READ_SAR' });
  }, 60_000);
  afterAll(() => stopChildren([server.child]));

  it('answers 503 while the key set cannot be fetched (never 401), then takes the configured role', async () => {
    const custom = await sarToken({
      key,
      claims: { client_id: 'sar-custom', authorities: ['ROLE_CASE_READ_SAR'], scope: ['read'] },
    });
    const down = await door('/subject-access-request/template', custom);
    expect(down.status).toBe(503);
    expect(problemType(down)).toBe('urn:case-read:problem:store-unavailable');
    expect(down.headers['retry-after']).toBe('1');
    await logged('"store":"the SAR service\'s key set"');
    jwks.answer('serve');
    expect((await door('/subject-access-request/template', custom)).status).toBe(200);
    // The default role is not the one configured now.
    expect((await door('/subject-access-request/template', await sarToken({ key }))).status).toBe(403);
  });
});
