import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';
import { ProblemType, problemResponse } from './problem.js';

/**
 * Every router is made here, so every route shares one validation hook: a request that
 * fails its zod schema gets a 400 problem+json naming the field, and never reaches a use
 * case. The client's input is not echoed back.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (result.success) return;
      const issues = result.error.issues;
      const onlyCrn = issues.every((issue) => issue.path[0] === 'crn');
      const detail = issues
        .map((issue) => `${issue.path.join('.') || result.target}: ${issue.message}`)
        .join('; ');
      return problemResponse(c, {
        status: 400,
        type: onlyCrn ? ProblemType.invalidCrn : ProblemType.invalidRequest,
        title: onlyCrn ? 'Invalid crn' : 'Invalid request',
        detail,
      });
    },
  });
}
