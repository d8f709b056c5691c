import { describe, expect, it } from 'vitest';
import type { Permission } from '../../src/domain/access/permissions.js';
import { NoQueueConfiguredError, PermissionDeniedError } from '../../src/domain/errors.js';
import {
  issueQueueToken,
  type QueueCredentials,
  type QueueCredentialsRequest,
  queueSessionPolicy,
} from '../../src/domain/queue/credentials.js';
import { AccessMother } from '../support/mothers.js';

const QUEUE = 'arn:aws:sqs:eu-west-2:000000000000:q';
const credentials: QueueCredentials = {
  accessKeyId: 'A',
  secretAccessKey: 'S',
  sessionToken: 'T',
  expiration: new Date('2026-01-01T00:00:00Z'),
};

function recordingIssuer() {
  const requests: QueueCredentialsRequest[] = [];
  return {
    requests,
    issue: async (r: QueueCredentialsRequest) => {
      requests.push(r);
      return credentials;
    },
  };
}

const caller = (overrides: Parameters<typeof AccessMother.client>[1] = {}) => ({
  client: AccessMother.client('client-a', {
    permissions: ['issueQueueToken'],
    queueArn: QUEUE,
    ...overrides,
  }),
  permissions: new Set<Permission>(overrides.permissions ?? ['issueQueueToken']),
});

describe('issueQueueToken', () => {
  it('asks for the client queue with the default role, a session policy and name', async () => {
    const issuer = recordingIssuer();
    const result = await issueQueueToken(
      { issuer, defaultRoleArn: 'arn:aws:iam::000000000000:role/d', durationSeconds: 900 },
      caller(),
      'req-1',
    );
    expect(result).toBe(credentials);
    expect(issuer.requests).toEqual([
      {
        clientId: 'client-a',
        roleArn: 'arn:aws:iam::000000000000:role/d',
        queueArn: QUEUE,
        sessionName: 'client-a@req-1',
        sessionPolicy: queueSessionPolicy(QUEUE),
        durationSeconds: 900,
      },
    ]);
  });

  it("prefers the client's own role", async () => {
    const issuer = recordingIssuer();
    await issueQueueToken(
      { issuer, defaultRoleArn: 'arn:aws:iam::000000000000:role/d', durationSeconds: 900 },
      caller({ roleArn: 'arn:aws:iam::000000000000:role/own' }),
      'r',
    );
    expect(issuer.requests[0]?.roleArn).toBe('arn:aws:iam::000000000000:role/own');
  });

  it.each([
    ['no queue', { queueArn: null }, 'arn:aws:iam::000000000000:role/d'],
    ['a queue but no role and no default', {}, null],
  ] as const)('%s → NoQueueConfiguredError, nothing issued', async (_label, overrides, defaultRoleArn) => {
    const issuer = recordingIssuer();
    await expect(
      issueQueueToken({ issuer, defaultRoleArn, durationSeconds: 900 }, caller(overrides), 'r'),
    ).rejects.toBeInstanceOf(NoQueueConfiguredError);
    expect(issuer.requests).toHaveLength(0);
  });

  it('without the permission → PermissionDeniedError', async () => {
    const issuer = recordingIssuer();
    await expect(
      issueQueueToken(
        { issuer, defaultRoleArn: null, durationSeconds: 900 },
        caller({ permissions: ['getCase'], roleArn: 'arn:aws:iam::000000000000:role/o' }),
        'r',
      ),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it('refuses a duration outside 900..43200 seconds', async () => {
    const issuer = recordingIssuer();
    const deps = (durationSeconds: number) => ({
      issuer,
      defaultRoleArn: 'arn:aws:iam::000000000000:role/d',
      durationSeconds,
    });
    await expect(issueQueueToken(deps(899), caller(), 'r')).rejects.toThrow(RangeError);
    await expect(issueQueueToken(deps(43_201), caller(), 'r')).rejects.toThrow(RangeError);
  });

  it('the session policy allows the four read actions on that queue only', () => {
    expect(JSON.parse(queueSessionPolicy(QUEUE))).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'ReadOwnQueue',
          Effect: 'Allow',
          Action: [
            'sqs:ReceiveMessage',
            'sqs:DeleteMessage',
            'sqs:ChangeMessageVisibility',
            'sqs:GetQueueAttributes',
          ],
          Resource: QUEUE,
        },
      ],
    });
  });
});
