import { ProblemSchema } from './schemas.js';

/** A problem+json response of a route, as the OpenAPI document declares it. */
export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/**
 * 403 on a crn operation: the perimeter's refusals, and limited access (decisions §8), whose
 * `detail` is the case's own message and never names another user.
 */
export const crnForbidden = {
  description:
    'API key missing or invalid, client not allowed, or permission not granted; or the case is limited access ' +
    '(type urn:case-read:problem:limited-access): the on-behalf-of user is excluded or not named by its ' +
    "restriction, or the client acts as itself and is set to deny. The detail is the case's message.",
  content: {
    'application/problem+json': {
      schema: ProblemSchema,
      examples: {
        limitedAccess: {
          summary: 'Limited access',
          value: {
            type: 'urn:case-read:problem:limited-access',
            title: 'Limited access',
            status: 403,
            detail: 'You are excluded from viewing this case.',
            instance: '/case/X123456',
            requestId: '3f0c2a9e-6d1b-4c8e-9a57-2b1d0e6f4a10',
          },
        },
      },
    },
  },
};

/**
 * 503 on every operation (decisions §11): an engine did not answer before the request's
 * deadline, the audit record could not be written, or the instance is overloaded. Each
 * carries `Retry-After`.
 */
export const unavailable = {
  description:
    'Service unavailable, with Retry-After. type urn:case-read:problem:store-unavailable: a store did not answer ' +
    "before the request's deadline (REQUEST_DEADLINE_MS) or failed; urn:case-read:problem:audit-unavailable: the " +
    'request could not be recorded, so it was not answered; urn:case-read:problem:overloaded: too many requests are ' +
    'waiting on this instance (MAX_IN_FLIGHT), refused at once, try again after Retry-After.',
  headers: {
    'Retry-After': {
      description: 'Seconds to wait before trying again',
      schema: { type: 'integer' as const },
    },
  },
  content: {
    'application/problem+json': {
      schema: ProblemSchema,
      examples: {
        overloaded: {
          summary: 'Overloaded',
          value: {
            type: 'urn:case-read:problem:overloaded',
            title: 'Service unavailable',
            status: 503,
            detail: 'too many requests are waiting on this instance; try again shortly',
            instance: '/case/X123456',
            requestId: '3f0c2a9e-6d1b-4c8e-9a57-2b1d0e6f4a10',
          },
        },
      },
    },
  },
};

/** 504: another service (the system of record, STS) did not answer in time, with `Retry-After`. */
export const gatewayTimeout = (what: string) => ({
  description: `${what} did not answer in time (its own timeout, or the request's deadline), with Retry-After`,
  headers: {
    'Retry-After': {
      description: 'Seconds to wait before trying again',
      schema: { type: 'integer' as const },
    },
  },
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/**
 * The failures every read of a case by its crn declares alike (403 to 504): refused, no case
 * held, rate limited, unexpected, and the system of record failing, unavailable or late.
 * A route adds its own 400 (and 401), and may say more of its 404.
 */
export const caseReadFailures = {
  403: crnForbidden,
  404: problem('No case is held for the crn'),
  429: problem('Rate limit exceeded'),
  500: problem('Unexpected error'),
  502: problem('The system of record failed'),
  503: unavailable,
  504: gatewayTimeout('The system of record'),
} as const;
