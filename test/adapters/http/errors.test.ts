import { describe, expect, it } from 'vitest';
import { CASE_OPERATIONS, type CaseOperation, casePath } from '../../../src/domain/case-operations.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import { fixtureApp, recordingLogger, servedDocument } from '../../support/http.js';
import { OpenApiValidator } from '../../support/openapi-validator.js';

const app = fixtureApp();
const validator = new OpenApiValidator(await servedDocument(app));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function expectCommonHeaders(response: Response): void {
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('x-request-id')).toMatch(UUID);
}

async function expectProblem(response: Response, status: number, type: string, instance?: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expectCommonHeaders(response);
  const body = (await response.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['detail', 'instance', 'requestId', 'status', 'title', 'type']);
  expect(body.type).toBe(type);
  expect(body.status).toBe(status);
  expect(body.requestId).toBe(response.headers.get('x-request-id'));
  if (instance !== undefined) expect(body.instance).toBe(instance);
  return body;
}

const BAD_CRNS: ReadonlyArray<readonly [string, string]> = [
  ['lower case', 'x123456'],
  ['too short', 'X12345'],
  ['too long', 'X1234567'],
  ['two letters', 'XX23456'],
  ['encoded traversal ../', '..%2F..%2Fetc%2Fpasswd'],
  ['encoded slash', '%2F'],
  ['double-encoded slash', '%252F'],
  ['encoded NUL', 'X123456%00'],
  ['leading space', '%20X123456'],
  ['fullwidth letter', encodeURIComponent('Ｘ123456')],
  ['fullwidth digits', encodeURIComponent('X１２３４５６')],
  ['emoji', encodeURIComponent('X12345🙂')],
  ['SQL', encodeURIComponent("X123456' OR '1'='1")],
  ['malformed percent-encoding', '%E0%A4%A'],
  ['10 kB', 'A'.repeat(10_240)],
];
/** A case operation's path with the crn put in as written: already percent-encoded, or meant to be malformed. */
const pathWith = (row: CaseOperation, crn: string): string => row.path.replace('{crn}', crn);

describe('bad crns → 400 problem+json, never 500', () => {
  for (const row of CASE_OPERATIONS) {
    it.each(BAD_CRNS)(`${row.path}: %s`, async (_label, crn) => {
      const response = await app.request(pathWith(row, crn));
      const body = await expectProblem(response, 400, 'urn:case-read:problem:invalid-crn');
      expect(body.title).toBe('Invalid crn');
      expect(body.detail).toBe('crn: must match the pattern ^[A-Z][0-9]{6}$');
      expect(String(body.instance).length).toBeLessThanOrEqual(256);
      expect(validator.responseErrors(row.path, 'get', 400, 'application/problem+json', body)).toEqual([]);
    });
  }

  it('an unencoded ../ is resolved by URL parsing before routing, and is then simply not found', async () => {
    const response = await app.request('/case/../etc/passwd');
    await expectProblem(response, 404, 'urn:case-read:problem:not-found', '/etc/passwd');
  });

  it('a 10 kB crn is not echoed back in full', async () => {
    const text = await (await app.request(`/case/${'A'.repeat(10_240)}`)).text();
    expect(text.length).toBeLessThan(1_000);
  });
});

describe('routes that do not exist', () => {
  it.each([
    '/',
    '/case',
    '/case/',
    '/cases/X123456',
    '/case/X123456/',
    '/case/X123456/unknown',
    '/v1/case/X123456',
  ])('GET %s → 404 not-found problem', async (path) => {
    await expectProblem(await app.request(path), 404, 'urn:case-read:problem:not-found');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])(
    '%s on a case route → 405 with Allow: GET, HEAD',
    async (method) => {
      for (const row of CASE_OPERATIONS) {
        const response = await app.request(casePath(row, 'X123456'), { method });
        const body = await expectProblem(response, 405, 'urn:case-read:problem:method-not-allowed');
        expect(response.headers.get('allow')).toBe('GET, HEAD');
        expect(body.detail).toBe(`${method} is not allowed here; allowed: GET, HEAD`);
      }
    },
  );

  it('HEAD on a case route answers 200 with the headers and no body', async () => {
    const response = await app.request('/case/X123456', { method: 'HEAD' });
    expect(response.status).toBe(200);
    expectCommonHeaders(response);
    expect(await response.text()).toBe('');
  });
});

describe('response headers', () => {
  it.each(['/case/X123456', '/case/Q000000', '/case/bad', '/openapi.json', '/nowhere'])(
    '%s carries no-store, nosniff and a request id',
    async (path) => {
      const response = await app.request(path);
      expectCommonHeaders(response);
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    },
  );

  it('gives each request its own id and ignores one sent by the client', async () => {
    const a = await app.request('/case/X123456', { headers: { 'X-Request-Id': 'chosen-by-client' } });
    const b = await app.request('/case/X123456');
    expect(a.headers.get('x-request-id')).not.toBe('chosen-by-client');
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('a store that fails', () => {
  const secret = 'SQLITE_CORRUPT at /srv/secret/path.db';
  const failing: CaseRepository = {
    findPersonalDetails: async () => {
      throw new Error(secret);
    },
    findHomeOfficeInterest: async () => {
      throw new TypeError(secret);
    },
    findCommunityManager: async () => {
      throw new Error(secret);
    },
    findRiskScores: async () => {
      throw new Error(secret);
    },
  };

  it.each(CASE_OPERATIONS)(
    '$path for X123456 → 500 with a generic problem; the cause goes to the log only',
    async (row) => {
      const logger = recordingLogger();
      const broken = fixtureApp({ repository: failing, logger });
      const response = await broken.request(casePath(row, 'X123456'));
      const text = await response.clone().text();
      const body = await expectProblem(response, 500, 'urn:case-read:problem:internal-error');
      expect(body.detail).toBe('an unexpected error occurred; quote the requestId to the operator');
      expect(text).not.toContain('SQLITE');
      expect(text).not.toContain('/srv');
      expect(text).not.toMatch(/\bat .+:\d+:\d+/);
      const errorLine = logger.lines.find((l) => l.level === 'error');
      expect(errorLine?.fields.requestId).toBe(body.requestId);
      expect(JSON.stringify(errorLine?.fields)).toContain(secret);
    },
  );
});

describe('access log', () => {
  it('logs method, route template and status, never the crn or any header', async () => {
    const logger = recordingLogger();
    const logged = fixtureApp({ logger });
    await logged.request('/case/X123456/home-office-interest', {
      headers: { 'x-api-key': 'crs_key_do-not-log', authorization: 'Bearer do-not-log' },
    });
    const [line] = logger.lines;
    expect(line?.fields).toMatchObject({
      method: 'GET',
      route: '/case/:crn/home-office-interest',
      status: 200,
    });
    const text = JSON.stringify(logger.lines);
    expect(text).not.toContain('X123456');
    expect(text).not.toContain('do-not-log');
  });
});
