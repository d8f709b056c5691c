import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StsCredentialsIssuer } from '../../../src/adapters/sts/credentials-issuer.js';
import { FAKE_CREDENTIALS, FakeSts, issuerFor, SECRET_ACCOUNT } from '../../support/fake-sts.js';
import { recordingLogger } from '../../support/http.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother, CaseMother } from '../../support/mothers.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import { type RunningTestService, startTestService } from '../../support/service.js';

const QUEUE = 'arn:aws:sqs:eu-west-2:000000000000:client-a-queue';
const DEFAULT_ROLE = 'arn:aws:iam::000000000000:role/default-queue-reader';
const sts = new FakeSts();
const logger = recordingLogger();
let pki: TestPki;
let service: RunningTestService;
let issuer: StsCredentialsIssuer;
const certs: Record<string, ClientCredentials> = {};
const keys: Record<string, string> = {};

beforeAll(async () => {
  const endpoint = await sts.start();
  issuer = issuerFor(endpoint);
  pki = await makeTestPki();
  service = await startTestService(pki, { issuer, defaultRoleArn: DEFAULT_ROLE, logger });
  const d = service.directory;
  await d.saveClient(
    AccessMother.client('with-queue', { permissions: ['issueQueueToken'], queueArn: QUEUE }),
  );
  await d.saveClient(
    AccessMother.client('own-role', {
      permissions: ['issueQueueToken'],
      queueArn: QUEUE,
      roleArn: 'arn:aws:iam::000000000000:role/own',
    }),
  );
  await d.saveClient(AccessMother.client('no-queue', { permissions: ['issueQueueToken'] }));
  await d.saveClient(AccessMother.client('no-permission', { permissions: ['getCase'], queueArn: QUEUE }));
  for (const cn of ['with-queue', 'own-role', 'no-queue', 'no-permission']) {
    certs[cn] = await pki.client(cn);
    keys[cn] = (await service.issueKey(cn)).key;
  }
  expect(CaseMother.full().crn).toBe('X123456');
});
afterAll(async () => {
  await service.close();
  issuer.close();
  await sts.stop();
  pki.cleanup();
});
beforeEach(() => {
  sts.behaviour = 'success';
  sts.calls.length = 0;
});

const post = (
  cn: string,
  headers: Record<string, string> = { 'x-api-key': keys[cn] as string },
  method = 'POST',
) =>
  httpsRequest(`${service.url}/token`, {
    ca: pki.ca.certPem,
    cert: certs[cn]?.certPem,
    key: certs[cn]?.keyPem,
    method,
    headers,
  } as never);

describe('POST /token', () => {
  it('returns the STS Credentials, no-store, with only the certificate and API key (no bearer)', async () => {
    const response = await post('with-queue');
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json()).toStrictEqual({ ...FAKE_CREDENTIALS, Expiration: '2026-11-22T13:34:41.000Z' });
    expect(sts.calls[0]?.params.get('RoleArn')).toBe(DEFAULT_ROLE);
    expect(sts.calls[0]?.params.get('Tags.member.1.Value')).toBe('with-queue');
    expect(sts.calls[0]?.params.get('RoleSessionName')).toBe(
      `with-queue@${response.headers['x-request-id']}`,
    );
  });

  it("uses the client's own role when it has one", async () => {
    expect((await post('own-role')).status).toBe(200);
    expect(sts.calls[0]?.params.get('RoleArn')).toBe('arn:aws:iam::000000000000:role/own');
  });

  it('no queue configured → 403 no-queue-configured, STS never called', async () => {
    const response = await post('no-queue');
    expect(response.status).toBe(403);
    expect(response.json()).toMatchObject({
      type: 'urn:case-read:problem:no-queue-configured',
      detail: 'no queue is configured for this client',
    });
    expect(sts.calls).toHaveLength(0);
  });

  it('no permission → 403 permission-denied', async () => {
    const response = await post('no-permission');
    expect(response.status).toBe(403);
    expect((response.json() as { type: string }).type).toBe('urn:case-read:problem:permission-denied');
    expect(sts.calls).toHaveLength(0);
  });

  it('no key → 403 access-denied', async () => {
    const response = await post('with-queue', {});
    expect(response.status).toBe(403);
    expect((response.json() as { type: string }).type).toBe('urn:case-read:problem:access-denied');
  });

  it('GET /token → 405 with Allow: POST', async () => {
    const response = await post('with-queue', { 'x-api-key': keys['with-queue'] as string }, 'GET');
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
  });

  it.each([
    ['access-denied', 502, 'urn:case-read:problem:upstream-failed'],
    ['throttling', 502, 'urn:case-read:problem:upstream-failed'],
    ['malformed', 502, 'urn:case-read:problem:upstream-failed'],
    ['hang', 504, 'urn:case-read:problem:upstream-timeout'],
  ] as const)(
    'STS %s → %i, nothing of the STS text, account or ARN in the answer',
    async (behaviour, status, type) => {
      sts.behaviour = behaviour;
      logger.lines.length = 0;
      const response = await post('with-queue');
      expect(response.status).toBe(status);
      expect((response.json() as { type: string }).type).toBe(type);
      expect(response.text).not.toContain(SECRET_ACCOUNT);
      expect(response.text).not.toContain('arn:');
      expect(response.text).not.toMatch(/AccessDenied|Throttling|not authorized/);
      const logged = JSON.stringify(logger.lines);
      expect(logged).toContain('upstream failure');
      expect(logged).not.toContain(SECRET_ACCOUNT);
    },
  );

  it('never writes the credentials to the log', async () => {
    logger.lines.length = 0;
    expect((await post('with-queue')).status).toBe(200);
    const logged = JSON.stringify(logger.lines);
    expect(logged).not.toContain(FAKE_CREDENTIALS.SecretAccessKey);
    expect(logged).not.toContain(FAKE_CREDENTIALS.SessionToken);
    expect(logged).not.toContain(FAKE_CREDENTIALS.AccessKeyId);
  });
});
