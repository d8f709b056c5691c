import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from './env.js';
import { PROBLEM_PREFIX, ProblemType, type ProblemTypeUri } from './problem-types.js';
import { respond } from './respond.js';

export { ProblemType, type ProblemTypeUri };

/**
 * RFC 9457 problem details. Every error the service answers is one of these, with a stable
 * `type` per kind of problem, the request path as `instance` and the request id, so a
 * consumer can quote it to an operator. No stack trace, no internal message, no secret.
 */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

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
