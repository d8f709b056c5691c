import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSarApp } from '../../../src/adapters/http/sar-app.js';
import { JoseSarTokenVerifier, SAR_KEY_SET } from '../../../src/adapters/jose/sar-token-verifier.js';
import { InMemoryRateLimiter } from '../../../src/adapters/memory/rate-limiter.js';
import type { Quota } from '../../../src/domain/access/quota.js';
import type { AuditRecord } from '../../../src/domain/audit/record.js';
import { CrnFormat } from '../../../src/domain/crn.js';
import { StoreUnavailableError, TrailIncompleteError } from '../../../src/domain/errors.js';
import type { SarTokenVerifier } from '../../../src/ports/sar-token-verifier.js';
import {
  hmacToken,
  jwksOf,
  SAR_CLIENT,
  SAR_ISSUER,
  SAR_ROLE,
  type SigningKey,
  sarToken,
  signingKey,
} from '../../support/authorisation-server.js';
import type { LogLine } from '../../support/http.js';
import { recordingLogger } from '../../support/http.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';

/**
 * The SAR service's door as an app (decisions §23), over a key set file: the two subject
 * access routes, with the main listener's handlers, behind the SAR service's token and role
 * and a rate limit per client; everything else 404; the audit record names the token's client
 * with no certificate serial, and a caller never identified (401) leaves none.
 */

const TEMPLATE = 'TEMPLATE {{crn}}\n';
let pki: TestPki;
let key: SigningKey;
let jwks: string;

beforeAll(async () => {
  pki = await makeTestPki();
  key = await signingKey('as-1');
  jwks = pki.write('sar-jwks.json', JSON.stringify(jwksOf([key])));
});
afterAll(() => pki.cleanup());

interface Door {
  readonly request: (
    path: string,
    token?: string,
    init?: { readonly method?: string; readonly headers?: Record<string, string> },
  ) => Promise<Response>;
  readonly records: AuditRecord[];
  readonly observed: [string, number][];
  readonly lines: LogLine[];
  readonly asked: string[];
}

/** The door's app with its own trail, metrics and log, the role and quota given. */
function door(options: { role?: string; quota?: Quota; verifier?: SarTokenVerifier } = {}): Door {
  const records: AuditRecord[] = [];
  const observed: [string, number][] = [];
  const asked: string[] = [];
  const logger = recordingLogger();
  const app = createSarApp({
    crnFormat: CrnFormat.default,
    door: {
      verifier: options.verifier ?? new JoseSarTokenVerifier({ jwks, issuer: SAR_ISSUER }),
      role: options.role ?? SAR_ROLE,
      rateLimit: {
        limiter: new InMemoryRateLimiter(),
        defaultQuota: options.quota ?? { limit: 1000, windowMs: 3_600_000 },
      },
      clock: { now: () => new Date() },
    },
    subjectAccess: {
      // The trail itself is the subject access tests' (subject-access.test.ts): here it refuses.
      disclosures: {
        of: (crn) => {
          asked.push(crn);
          return Promise.reject(new TrailIncompleteError('not read in this test'));
        },
      },
      now: () => new Date(),
      template: TEMPLATE,
    },
    logger,
    audit: { append: (record) => void records.push(record) },
    observe: (operation, status) => void observed.push([operation, status]),
    deadlines: { requestMs: 55_000, maxInFlight: 16 },
  });
  return {
    request: async (path, token, init = {}) =>
      app.request(path, {
        ...(init.method ? { method: init.method } : {}),
        headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...init.headers },
      }),
    records,
    observed,
    lines: logger.lines,
    asked,
  };
}

const typeOf = async (response: Response) => ((await response.json()) as { type: string }).type;

describe('the SAR door: the two routes with the SAR service’s token', () => {
  it('serves the template and the subject access request with the role, recorded to the token’s client', async () => {
    const d = door();
    const token = await sarToken({ key });
    const template = await d.request('/subject-access-request/template', token);
    expect(template.status).toBe(200);
    expect(template.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await template.text()).toBe(TEMPLATE);
    expect(template.headers.get('ratelimit-policy')).toBe('"per-client";q=1000;w=3600');
    const prn = await d.request('/subject-access-request?prn=A1234BC', token);
    expect(prn.status).toBe(209);
    // The query schema is the main listener's: a crn of the configured pattern, read to the use case.
    expect((await d.request('/subject-access-request?crn=x1', token)).status).toBe(400);
    const sar = await d.request('/subject-access-request?crn=X123456', token);
    expect([sar.status, await typeOf(sar)]).toEqual([503, 'urn:case-read:problem:trail-unavailable']);
    expect(d.asked).toEqual(['X123456']);
    expect(d.records.map((r) => [r.operation, r.status, r.crn])).toEqual([
      ['getSubjectAccessRequestTemplate', 200, null],
      ['getSubjectAccessRequest', 209, null],
      ['getSubjectAccessRequest', 400, null],
      ['getSubjectAccessRequest', 503, 'X123456'],
    ]);
    for (const record of d.records) {
      expect(record).toMatchObject({ clientId: SAR_CLIENT, certificateSerial: '', onBehalfOf: null });
    }
    expect(d.records[0]?.requestId).toBe(template.headers.get('x-request-id'));
    expect(d.observed).toContainEqual(['getSubjectAccessRequestTemplate', 200]);
    expect(d.observed).toContainEqual(['getSubjectAccessRequest', 503]);
  });

  it('takes another role when it is the one configured (SAR_AUTH_ROLE), and then refuses the default one', async () => {
    const d = door({ role: 'ROLE_CASE_READ_SAR' });
    const custom = await sarToken({
      key,
      claims: { client_id: 'sar-custom', authorities: ['ROLE_OTHER', 'ROLE_CASE_READ_SAR'], scope: ['read'] },
    });
    expect((await d.request('/subject-access-request/template', custom)).status).toBe(200);
    expect((await d.request('/subject-access-request/template', await sarToken({ key }))).status).toBe(403);
  });
});

describe('the SAR door: refusals', () => {
  it('no token: 401 with a bare Bearer challenge, and no record (the caller is not identified)', async () => {
    const d = door();
    const res = await d.request('/subject-access-request?crn=X123456');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="case-read-service"');
    expect(await typeOf(res)).toBe('urn:case-read:problem:unauthenticated');
    expect(d.records).toEqual([]);
    expect(d.asked).toEqual([]);
    expect(d.observed).toEqual([['getSubjectAccessRequest', 401]]);
  });

  const invalid: [string, () => Promise<string>][] = [
    ['expired', () => sarToken({ key, expiresIn: -120 })],
    ['another issuer', () => sarToken({ key, issuer: 'https://elsewhere.test' })],
    ['an unknown kid', () => sarToken({ key, kid: 'as-9' })],
    ['HS256', () => hmacToken({ client_id: SAR_CLIENT, authorities: [SAR_ROLE] }, 'secret')],
    ['a bad signature', async () => sarToken({ key: await signingKey('as-1') })],
  ];
  it.each(invalid)(
    'a token %s: 401 invalid_token, no record, nothing of the token logged',
    async (_l, mint) => {
      const d = door();
      const token = await mint();
      const res = await d.request('/subject-access-request/template', token);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(
        /^Bearer realm="case-read-service", error="invalid_token"/,
      );
      expect(d.records).toEqual([]);
      const said = JSON.stringify(d.lines) + (await res.text());
      for (const part of token.split('.')) expect(said).not.toContain(part);
    },
  );

  it('an Authorization header that is no bearer token: 401 invalid_token', async () => {
    const d = door();
    const res = await d.request('/subject-access-request/template', undefined, {
      headers: { authorization: 'Basic c2FyOnNlY3JldA==' },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a valid token without the role: 403, recorded to its client', async () => {
    const d = door();
    const token = await sarToken({
      key,
      claims: { client_id: 'other-service', authorities: ['ROLE_OTHER'] },
    });
    const res = await d.request('/subject-access-request?crn=X123456', token);
    expect([res.status, await typeOf(res)]).toEqual([403, 'urn:case-read:problem:permission-denied']);
    expect(d.asked).toEqual([]);
    expect(d.records).toMatchObject([
      {
        clientId: 'other-service',
        certificateSerial: '',
        operation: 'getSubjectAccessRequest',
        status: 403,
        problem: 'permission-denied',
      },
    ]);
  });

  it('over the quota: 429 per client with Retry-After and the RateLimit fields, recorded; another client goes on', async () => {
    const d = door({ quota: { limit: 2, windowMs: 86_400_000 } });
    const first = await sarToken({ key });
    const second = await sarToken({ key, claims: { client_id: 'sar-second', authorities: [SAR_ROLE] } });
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await d.request('/subject-access-request/template', first)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const limited = await d.request('/subject-access-request/template', first);
    expect(await typeOf(limited)).toBe('urn:case-read:problem:rate-limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit')).toMatch(/^"per-client";r=0;t=\d+$/);
    expect((await d.request('/subject-access-request/template', second)).status).toBe(200);
    expect(d.records.map((r) => [r.clientId, r.status])).toEqual([
      [SAR_CLIENT, 200],
      [SAR_CLIENT, 200],
      [SAR_CLIENT, 429],
      [SAR_CLIENT, 429],
      ['sar-second', 200],
    ]);
  });

  it('a key set that cannot be had: 503 store-unavailable with Retry-After, never 401; logged by name', async () => {
    const d = door({
      verifier: { verify: () => Promise.reject(new StoreUnavailableError(SAR_KEY_SET, 'unreachable')) },
    });
    const res = await d.request('/subject-access-request/template', await sarToken({ key }));
    expect([res.status, await typeOf(res)]).toEqual([503, 'urn:case-read:problem:store-unavailable']);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(d.records).toEqual([]);
    expect(d.lines).toContainEqual(
      expect.objectContaining({
        message: 'store unavailable',
        fields: expect.objectContaining({ store: "the SAR service's key set", label: 'unreachable' }),
      }),
    );
  });

  it.each([
    '/metrics',
    '/health/ready',
    '/health/live',
    '/info',
    '/openapi.json',
    '/docs',
    '/case/X123456',
    '/v1/persons/X123456/risks/scores',
    '/token',
    '/',
    '/subject-access-request/other',
  ])('anything else, %s, is 404 problem+json, with a token or without', async (path) => {
    const d = door();
    for (const token of [undefined, await sarToken({ key })]) {
      const res = await d.request(path, token);
      expect(res.status).toBe(404);
      expect(await typeOf(res)).toBe('urn:case-read:problem:not-found');
    }
    expect(d.records).toEqual([]);
  });

  it('another method on its two paths: 405, naming GET', async () => {
    const d = door();
    const res = await d.request('/subject-access-request', await sarToken({ key }), { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});
