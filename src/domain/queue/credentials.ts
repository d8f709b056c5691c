import type { CredentialsIssuer } from '../../ports/credentials-issuer.js';
import type { Deadline } from '../../ports/deadline.js';
import { requirePermission } from '../access/admit.js';
import type { Caller } from '../access/model.js';
import { NoQueueConfiguredError } from '../errors.js';
import type { QueueCredentials } from './model.js';

export type { QueueCredentials, QueueCredentialsRequest } from './model.js';

/** The only queue actions a consumer needs to read its queue. */
export const QUEUE_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueAttributes',
] as const;

/** The session policy: the four read actions, on that one queue, nothing else. */
export function queueSessionPolicy(queueArn: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [{ Sid: 'ReadOwnQueue', Effect: 'Allow', Action: [...QUEUE_ACTIONS], Resource: queueArn }],
  });
}

/**
 * A role session name from the client's CN and the request id: only the characters the
 * token service allows (`[\w+=,.@-]`), at most 64, the request id kept whole where it fits
 * so the session can be traced to the audit record.
 */
export function roleSessionName(clientId: string, requestId: string): string {
  const clean = (s: string) => s.replace(/[^\w+=,.@-]/g, '-');
  const id = clean(requestId).slice(0, 40);
  const cn = clean(clientId).slice(0, 63 - id.length);
  return `${cn}@${id}`.slice(0, 64);
}

export interface IssueQueueTokenDeps {
  readonly issuer: Pick<CredentialsIssuer, 'issue'>;
  /** The role used when the client has none of its own; null when there is no default. */
  readonly defaultRoleArn: string | null;
  /** 900..43200 seconds. */
  readonly durationSeconds: number;
}

/**
 * Operation `issueQueueToken`: temporary credentials that let the caller read its own
 * queue, and nothing else, until they expire.
 */
export async function issueQueueToken(
  { issuer, defaultRoleArn, durationSeconds }: IssueQueueTokenDeps,
  caller: Pick<Caller, 'client' | 'permissions'>,
  requestId: string,
  deadline?: Deadline,
): Promise<QueueCredentials> {
  requirePermission(caller, 'issueQueueToken');
  const { client } = caller;
  const roleArn = client.roleArn ?? defaultRoleArn;
  if (client.queueArn === null || roleArn === null) throw new NoQueueConfiguredError();
  if (!Number.isInteger(durationSeconds) || durationSeconds < 900 || durationSeconds > 43_200) {
    throw new RangeError('credential duration must be 900..43200 seconds');
  }
  return issuer.issue(
    {
      clientId: client.id,
      roleArn,
      queueArn: client.queueArn,
      sessionName: roleSessionName(client.id, requestId),
      sessionPolicy: queueSessionPolicy(client.queueArn),
      durationSeconds,
    },
    deadline,
  );
}
