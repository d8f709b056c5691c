import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import { CASE_READS, type CaseRead } from '../../domain/case-operations.js';
import type { CrnFormat } from '../../domain/crn.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import { caseHandlers } from './cases.handlers.js';
import { caseRoutes, type OperationGuard } from './cases.routes.js';
import type { AppEnv } from './env.js';
import { riskHandlers } from './risk.handlers.js';
import { riskRoutes } from './risk.routes.js';

/** Every case operation's route: a row of the table without one is a compile error here. */
type CaseReadRoutes = { readonly [K in CaseRead]: RouteConfig };

function routesOf(format: CrnFormat, guard: OperationGuard) {
  return { ...caseRoutes(format, guard), ...riskRoutes(format, guard) } satisfies CaseReadRoutes;
}
type Routes = ReturnType<typeof routesOf>;

/** Every case operation's handler, typed by its own route. */
type Handlers = { readonly [K in CaseRead]: RouteHandler<Routes[K], AppEnv> };

/** One operation's route and handler, the two of the same id. */
function register<K extends CaseRead>(
  app: OpenAPIHono<AppEnv>,
  routes: Routes,
  handlers: Handlers,
  id: K,
): void {
  app.openapi(routes[id], handlers[id]);
}

/**
 * The case operations, registered in the table's order (case-operations.ts): each one's route
 * (`*.routes.ts`, its path, permission and security from its row) and handler (`*.handlers.ts`).
 */
export function registerCaseReads(
  app: OpenAPIHono<AppEnv>,
  { format, guard, repository }: { format: CrnFormat; guard: OperationGuard; repository: CaseRepository },
): void {
  const routes = routesOf(format, guard);
  const handlers: Handlers = { ...caseHandlers({ repository }), ...riskHandlers({ repository }) };
  for (const id of CASE_READS) register(app, routes, handlers, id);
}
