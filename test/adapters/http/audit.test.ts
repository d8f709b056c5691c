import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../../src/adapters/jose/dev-issuer.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-audit-http-'));
let pki: TestPki;
let service: RunningTestService;
let failing: RunningTestService;
let audit: SqliteAuditLog;
const certs: Record<string, ClientCredentials> = {};
/** What the failing service told its metrics. */
const auditFailures: string[] = [];
const keys: Record<string, string> = {};
let oboJwk: Awaited<ReturnType<typeof exportJWK>>;

beforeAll(async () => {
  pki = await makeTestPki();
  audit = SqliteAuditLog.open(join(dir, 'audit.db'));
  service = await startTestService(pki, { audit });
  failing = await startTestService(pki, {
    audit: {
      append: () => {
        throw new Error('disk full');
      },
    },
    auditFailed: (outcome) => auditFailures.push(outcome),
  });
  const pair = await generateKeyPair('ES256', { extractable: true });
  oboJwk = { ...(await exportJWK(pair.privateKey)), kid: 'idp', alg: 'ES256' };
  const jwks = pki.write(
    'idp.json',
    JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'idp', alg: 'ES256' }] }),
  );
  for (const s of [service, failing]) {
    await s.directory.saveClient(
      AccessMother.client('client-a', {
        onBehalfOf: {
          mode: 'optional',
          issuer: 'https://idp.test',
          jwks,
          audience: 'obo',
          emailClaim: 'email',
        },
      }),
    );
  }
  certs['client-a'] = await pki.client('client-a');
  keys.a = (await service.issueKey('client-a')).key;
  keys.failing = (await failing.issueKey('client-a')).key;
});
afterAll(async () => {
  await service.close();
  await failing.close();
  audit.close();
  pki.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function call(target: RunningTestService, path: string, headers: Record<string, string>) {
  return httpsRequest(`${target.url}${path}`, {
    ca: pki.ca.certPem,
    cert: certs['client-a']?.certPem as string,
    key: certs['client-a']?.keyPem as string,
    headers,
  });
}

const lastRecord = async () => (await audit.query({ limit: 100_000 })).at(-1);

describe('the audit trail (decisions §5)', () => {
  it('records an answered read: time, request id, CN, serial, operation, crn, status', async () => {
    const before = Date.now();
    const response = await call(service, '/case/X123456/home-office-interest', {
      'x-api-key': keys.a as string,
      authorization: `Bearer ${await mintTestToken(pki, 'client-a')}`,
    });
    expect(response.status).toBe(200);
    expect(await lastRecord()).toMatchObject({
      requestId: response.headers['x-request-id'],
      clientId: 'client-a',
      certificateSerial: certs['client-a']?.serialNumber,
      onBehalfOf: null,
      operation: 'getHomeOfficeInterest',
      crn: 'X123456',
      status: 200,
      issued: null,
    });
    expect((await lastRecord())?.at.getTime()).toBeGreaterThanOrEqual(before - 1);
  });

  it('records the on-behalf-of e-mail', async () => {
    const obo = await mintToken({
      privateJwk: oboJwk,
      issuer: 'https://idp.test',
      audience: 'obo',
      clientId: 'idp',
      expiresInSeconds: 60,
      extraClaims: { email: 'Officer@Probation.Example' },
    });
    const response = await call(service, '/case/X123456', {
      'x-api-key': keys.a as string,
      authorization: `Bearer ${await mintTestToken(pki, 'client-a')}`,
      'x-on-behalf-of': obo,
    });
    expect(response.status).toBe(200);
    expect(await lastRecord()).toMatchObject({
      onBehalfOf: 'officer@probation.example',
      operation: 'getCase',
    });
  });

  it('records refusals from step 3 on: a bad key, a missing token, an unknown case', async () => {
    const badKey = await call(service, '/case/X123456', { 'x-api-key': 'nope' });
    expect(await lastRecord()).toMatchObject({
      requestId: badKey.headers['x-request-id'],
      clientId: 'client-a',
      status: 403,
      crn: null,
      operation: 'GET /*',
    });
    const noToken = await call(service, '/case/X123456', { 'x-api-key': keys.a as string });
    expect(await lastRecord()).toMatchObject({
      requestId: noToken.headers['x-request-id'],
      status: 401,
      operation: 'getCase',
      crn: null,
    });
    const unknown = await call(service, '/case/Q000000', {
      'x-api-key': keys.a as string,
      authorization: `Bearer ${await mintTestToken(pki, 'client-a')}`,
    });
    expect(await lastRecord()).toMatchObject({
      requestId: unknown.headers['x-request-id'],
      status: 404,
      crn: 'Q000000',
    });
  });

  it('records an invalid crn without the invalid value', async () => {
    const response = await call(service, '/case/..%2F..%2Fetc', {
      'x-api-key': keys.a as string,
      authorization: `Bearer ${await mintTestToken(pki, 'client-a')}`,
    });
    expect(response.status).toBe(400);
    expect(await lastRecord()).toMatchObject({ status: 400, crn: null, operation: 'getCase' });
  });

  it('holds no response data and no secret, and its chain verifies', async () => {
    const token = await mintTestToken(pki, 'client-a');
    await call(service, '/case/X123456/community-manager', {
      'x-api-key': keys.a as string,
      authorization: `Bearer ${token}`,
    });
    audit.close();
    const stored = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f)).toString('latin1'))
      .join('\n');
    audit = SqliteAuditLog.open(join(dir, 'audit.db'));
    expect(stored).not.toContain((keys.a as string).slice(-20));
    expect(stored).not.toContain(token.slice(-20));
    expect(stored).not.toContain('Synthetic');
    expect(stored).not.toContain('alex.testperson');
    expect(await audit.verify()).toMatchObject({ ok: true });
  });

  it('fails closed: when the record cannot be written, the answer is withheld (503)', async () => {
    const response = await call(failing, '/case/X123456', {
      'x-api-key': keys.failing as string,
      authorization: `Bearer ${await mintTestToken(pki, 'client-a')}`,
    });
    expect(response.status).toBe(503);
    expect(response.json()).toMatchObject({ type: 'urn:case-read:problem:audit-unavailable', status: 503 });
    expect(response.text).not.toContain('preferredLanguage');
    expect(response.text).not.toContain('disk full');
    expect(response.headers['x-request-id']).toBeDefined();
    // As the OpenAPI document's 503 says: every 503 carries Retry-After.
    expect(response.headers['retry-after']).toBe('1');
    // Counted for case_read_audit_append_failures_total, the alert's metric.
    expect(auditFailures).toContain('withheld');
  });
});
