import { OpenAPIHono } from '@hono/zod-openapi';
import type { Tracer } from '@opentelemetry/api';
import type { AppEnv, HttpLogger } from './env.js';
import { errorHandler } from './errors.js';
import { answerOtherMethods } from './method-not-allowed.js';
import { ProblemType, problemResponse } from './problem.js';
import { type RequestCycleOptions, requestCycle } from './request-cycle.js';
import { serverSpans } from './tracing.js';

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

/**
 * A router with what every request of every app goes through first, the main listener's and
 * the SAR door's alike: its server span (when tracing is on), then the request cycle.
 */
export function cycledRouter(tracer: Tracer | undefined, cycle: RequestCycleOptions): OpenAPIHono<AppEnv> {
  const app = createRouter();
  if (tracer) app.use(serverSpans(tracer));
  app.use(requestCycle(cycle));
  return app;
}

/**
 * What every app answers after its routes, the main listener's and the SAR door's alike: 405
 * for another method on a route, 404 problem+json for any other path, and every error as its
 * problem (errors.ts).
 */
export function answerTheRest(app: OpenAPIHono<AppEnv>, logger: HttpLogger): void {
  answerOtherMethods(app);
  app.notFound((c) =>
    problemResponse(c, {
      status: 404,
      type: ProblemType.notFound,
      title: 'Not found',
      detail: 'no resource is served at this path',
    }),
  );
  app.onError(errorHandler(logger));
}
