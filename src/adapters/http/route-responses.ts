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
