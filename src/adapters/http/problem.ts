import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from './env.js';
import { respond } from './respond.js';

/**
 * RFC 9457 problem details. Every error the service answers is one of these, with a stable
 * `type` per kind of problem, the request path as `instance` and the request id, so a
 * consumer can quote it to an operator. No stack trace, no internal message, no secret.
 */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const PROBLEM_PREFIX = 'urn:case-read:problem:';

export const ProblemType = {
  invalidCrn: 'urn:case-read:problem:invalid-crn',
  invalidRequest: 'urn:case-read:problem:invalid-request',
  caseNotFound: 'urn:case-read:problem:case-not-found',
  communityManagerNotFound: 'urn:case-read:problem:community-manager-not-found',
  notFound: 'urn:case-read:problem:not-found',
  methodNotAllowed: 'urn:case-read:problem:method-not-allowed',
  internal: 'urn:case-read:problem:internal-error',
  accessDenied: 'urn:case-read:problem:access-denied',
  clientNotAllowed: 'urn:case-read:problem:client-not-allowed',
  unauthenticated: 'urn:case-read:problem:unauthenticated',
  onBehalfOfNotAllowed: 'urn:case-read:problem:on-behalf-of-not-allowed',
  permissionDenied: 'urn:case-read:problem:permission-denied',
  limitedAccess: 'urn:case-read:problem:limited-access',
  noQueueConfigured: 'urn:case-read:problem:no-queue-configured',
  upstreamFailed: 'urn:case-read:problem:upstream-failed',
  upstreamTimeout: 'urn:case-read:problem:upstream-timeout',
  rateLimited: 'urn:case-read:problem:rate-limited',
  auditUnavailable: 'urn:case-read:problem:audit-unavailable',
  storeUnavailable: 'urn:case-read:problem:store-unavailable',
} as const;
export type ProblemTypeUri = (typeof ProblemType)[keyof typeof ProblemType];

export interface ProblemInput {
  readonly status: ContentfulStatusCode;
  readonly type: ProblemTypeUri;
  readonly title: string;
  readonly detail: string;
}

/** The longest request path echoed as `instance`; longer paths are cut (they are never valid). */
const MAX_INSTANCE_LENGTH = 256;

export function problemResponse(
  c: Context<AppEnv>,
  problem: ProblemInput,
  headers?: Readonly<Record<string, string>>,
): Response {
  const path = c.req.path;
  // The problem's own name (`limited-access`, …), for the audit record.
  c.set('problem', problem.type.slice(PROBLEM_PREFIX.length));
  const body = {
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    instance: path.length > MAX_INSTANCE_LENGTH ? path.slice(0, MAX_INSTANCE_LENGTH) : path,
    requestId: c.get('requestId') ?? 'unknown',
  };
  return respond(c, problem.status, JSON.stringify(body), PROBLEM_CONTENT_TYPE, headers);
}
