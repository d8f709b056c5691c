import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';
import { ProblemType, problemResponse } from './problem.js';

/**
 * A known path asked with a method it does not answer: 405 with `Allow`, not 404. Added
 * after every route, so it sees them all (HEAD is allowed wherever GET is).
 */
export function answerOtherMethods(app: OpenAPIHono<AppEnv>): void {
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of app.routes) {
    if (route.method === 'ALL') continue;
    const methods = methodsByPath.get(route.path) ?? new Set<string>();
    methods.add(route.method);
    if (route.method === 'GET') methods.add('HEAD');
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods].sort().join(', ');
    app.all(path, (c) =>
      problemResponse(
        c,
        {
          status: 405,
          type: ProblemType.methodNotAllowed,
          title: 'Method not allowed',
          detail: `${c.req.method} is not allowed here; allowed: ${allow}`,
        },
        { Allow: allow },
      ),
    );
  }
}
