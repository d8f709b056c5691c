import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AWS_MAX_RESPONSE_BYTES } from '../../../src/adapters/shared/aws-client.js';
import type { StsCredentialsIssuer } from '../../../src/adapters/sts/credentials-issuer.js';
import { UpstreamFailedError, UpstreamTimeoutError } from '../../../src/domain/errors.js';
import { QUEUE_ACTIONS, queueSessionPolicy, roleSessionName } from '../../../src/domain/queue/credentials.js';
import { FAKE_CREDENTIALS, FakeSts, issuerFor, SECRET_ACCOUNT } from '../../support/fake-sts.js';

const sts = new FakeSts();
let issuer: StsCredentialsIssuer;
let endpoint: string;
const QUEUE = 'arn:aws:sqs:eu-west-2:000000000000:client-a-queue';
const ROLE = 'arn:aws:iam::000000000000:role/client-a-reader';
const request = {
  clientId: 'client-a',
  roleArn: ROLE,
  queueArn: QUEUE,
  sessionName: roleSessionName('client-a', '5f2b8c1e-0d7a-4f7e-9c1a-2b3c4d5e6f70'),
  sessionPolicy: queueSessionPolicy(QUEUE),
  durationSeconds: 1800,
};

beforeAll(async () => {
  endpoint = await sts.start();
  issuer = issuerFor(endpoint);
});
afterAll(async () => {
  issuer.close();
  await sts.stop();
});
beforeEach(() => {
  sts.calls.length = 0;
  sts.behaviour = 'success';
});

describe('StsCredentialsIssuer against a fake STS (the real @aws-sdk/client-sts client)', () => {
  it('returns the Credentials exactly, with the ISO expiration', async () => {
    const credentials = await issuer.issue(request);
    expect(credentials).toEqual({
      accessKeyId: FAKE_CREDENTIALS.AccessKeyId,
      secretAccessKey: FAKE_CREDENTIALS.SecretAccessKey,
      sessionToken: FAKE_CREDENTIALS.SessionToken,
      expiration: new Date(FAKE_CREDENTIALS.Expiration),
    });
    expect(credentials.expiration.toISOString()).toBe('2026-11-22T13:34:41.000Z');
  });

  it('sends a signed AssumeRole with role, session name, tag, duration and policy', async () => {
    await issuer.issue(request);
    expect(sts.calls).toHaveLength(1);
    const [{ headers, params }] = sts.calls as [(typeof sts.calls)[number]];
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-2\/sts\/aws4_request, /,
    );
    expect(headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(params.get('Action')).toBe('AssumeRole');
    expect(params.get('Version')).toBe('2011-06-15');
    expect(params.get('RoleArn')).toBe(ROLE);
    const sessionName = params.get('RoleSessionName') ?? '';
    expect(sessionName).toMatch(/^[\w+=,.@-]{2,64}$/);
    expect(sessionName).toBe('client-a@5f2b8c1e-0d7a-4f7e-9c1a-2b3c4d5e6f70');
    expect(params.get('DurationSeconds')).toBe('1800');
    expect(params.get('Tags.member.1.Key')).toBe('ClientId');
    expect(params.get('Tags.member.1.Value')).toBe('client-a');
    expect(params.get('Tags.member.2.Key')).toBeNull();
  });

  it('sends a session policy that names only the client queue and the four read actions', async () => {
    await issuer.issue(request);
    const policy = JSON.parse(sts.calls[0]?.params.get('Policy') ?? '{}') as {
      Statement: { Effect: string; Action: string[]; Resource: string }[];
    };
    expect(policy.Statement).toHaveLength(1);
    expect(policy.Statement[0]?.Effect).toBe('Allow');
    expect(policy.Statement[0]?.Action).toEqual([...QUEUE_ACTIONS]);
    expect(policy.Statement[0]?.Resource).toBe(QUEUE);
    const arns = JSON.stringify(policy).match(/arn:[^"]+/g);
    expect(arns).toEqual([QUEUE]);
  });

  it.each([
    ['access-denied', 'AccessDenied (403)'],
    ['throttling', 'Throttling (400)'],
  ] as const)('%s → UpstreamFailedError, with nothing of the STS text', async (behaviour, label) => {
    sts.behaviour = behaviour;
    const error = await issuer.issue(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamFailedError);
    expect((error as UpstreamFailedError).logLabel).toBe(label);
    expect((error as Error).message).toBe('the credentials service failed; try again later');
    expect(JSON.stringify({ ...(error as object), message: (error as Error).message })).not.toContain(
      SECRET_ACCOUNT,
    );
  });

  it('malformed XML → UpstreamFailedError', async () => {
    sts.behaviour = 'malformed';
    const error = await issuer.issue(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamFailedError);
    expect((error as Error).message).not.toContain('ASIA');
  });

  it('an answer that never ends: reading stops at AWS_MAX_RESPONSE_BYTES, its connection closed → UpstreamFailedError', async () => {
    sts.behaviour = 'endless';
    const patient = issuerFor(endpoint, { timeoutMs: 20_000 });
    try {
      const error = await patient.issue(request).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamFailedError);
      expect((error as UpstreamFailedError).logLabel).toBe('ResponseTooLarge (200)');
      await sts.answerClosed;
      // What was written before the close: the bound, and what the sockets' buffers held.
      expect(sts.bodyBytesWritten).toBeLessThan(AWS_MAX_RESPONSE_BYTES + 8 * 1024 * 1024);
      expect(sts.bodyBytesWritten).toBeGreaterThan(AWS_MAX_RESPONSE_BYTES);
    } finally {
      patient.close();
    }
  });

  it('a Content-Length over the bound is refused unread, its connection closed', async () => {
    sts.behaviour = 'lying-length';
    const patient = issuerFor(endpoint, { timeoutMs: 20_000 });
    try {
      const error = await patient.issue(request).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamFailedError);
      expect((error as UpstreamFailedError).logLabel).toBe('ResponseTooLarge');
      await sts.answerClosed;
    } finally {
      patient.close();
    }
  });

  it('a hang past the timeout → UpstreamTimeoutError, promptly', async () => {
    sts.behaviour = 'hang';
    const started = performance.now();
    const error = await issuer.issue(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect((error as Error).message).toBe('the credentials service did not answer in time; try again later');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('retries throttling when allowed more attempts, then gives up', async () => {
    sts.behaviour = 'throttling';
    const retrying = issuerFor(endpoint, { timeoutMs: 10_000, maxAttempts: 2 });
    try {
      await expect(retrying.issue(request)).rejects.toBeInstanceOf(UpstreamFailedError);
      expect(sts.calls).toHaveLength(2);
    } finally {
      retrying.close();
    }
  });
});

describe('roleSessionName', () => {
  it('keeps STS characters, at most 64, the request id whole where it fits', () => {
    expect(roleSessionName('client-a', 'abc')).toBe('client-a@abc');
    expect(roleSessionName('client a/b', 'id:1')).toBe('client-a-b@id-1');
    const long = roleSessionName('c'.repeat(80), '5f2b8c1e-0d7a-4f7e-9c1a-2b3c4d5e6f70');
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long.endsWith('@5f2b8c1e-0d7a-4f7e-9c1a-2b3c4d5e6f70')).toBe(true);
    expect(roleSessionName('ü€', 'x'.repeat(100))).toMatch(/^[\w+=,.@-]{1,64}$/);
  });
});
