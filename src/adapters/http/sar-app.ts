import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Tracer } from '@opentelemetry/api';
import type { CrnFormat } from '../../domain/crn.js';
import type { AuditWriter } from '../../ports/audit-log.js';
import type { Engine } from './deadline.js';
import { type AppEnv, type HttpLogger, SILENT_LOGGER } from './env.js';
import type { LateAppends } from './late-appends.js';
import type { AuditFailure, DeadlineOptions } from './request-cycle.js';
import { answerTheRest, cycledRouter } from './router.js';
import { guardSarOperation, type SarDoorOptions } from './sar-guard.js';
import { type SubjectAccessOptions, subjectAccessHandlers } from './subject-access.handlers.js';
import { subjectAccessRoutes } from './subject-access.routes.js';

/**
 * The SAR service's door (decisions §23): the Hono app of the listener on `SAR_PORT`. It
 * serves the two subject access routes and nothing else, with the main listener's handlers
 * and query schema, behind {@link guardSarOperation} (the organisation's token, its role, a
 * rate limit per client) instead of mutual TLS and an API key. The same request cycle runs
 * around every request: request id and headers, overload, the deadline (`SAR_REQUEST_DEADLINE_MS`),
 * the audit record (its recipient the token's client), metrics and the access log.
 * Everything else, `/metrics`, `/health`, `/openapi.json` and `/case/...` included, is a 404.
 */

export interface SarAppOptions {
  readonly crnFormat: CrnFormat;
  readonly door: SarDoorOptions;
  readonly subjectAccess: SubjectAccessOptions;
  readonly logger?: HttpLogger;
  /** The audit trail, as the main listener writes it: the door's requests are in the same trail. */
  readonly audit?: AuditWriter;
  /** The main listener's: the records of answers given, settled at shutdown. */
  readonly lateAppends?: LateAppends;
  readonly observe?: (operation: string, status: number, seconds: number) => void;
  readonly tracer?: Tracer;
  readonly deadlines: DeadlineOptions;
  readonly deadlineExceeded?: (engine: Engine) => void;
  readonly overloaded?: () => void;
  readonly auditFailed?: (outcome: AuditFailure) => void;
  /** Why no request may be answered now, if none may (see `RequestCycleOptions.refusing`). */
  readonly refusing?: () => string | undefined;
}

/** The security requirement the door's routes carry: the organisation's client-credentials token alone. */
const SAR_DOOR_SECURITY = [{ sarServiceToken: [] }];

export function createSarApp(options: SarAppOptions): OpenAPIHono<AppEnv> {
  const logger = options.logger ?? SILENT_LOGGER;
  const app = cycledRouter(options.tracer, {
    logger,
    audit: options.audit,
    observe: options.observe,
    deadlines: options.deadlines,
    deadlineExceeded: options.deadlineExceeded,
    overloaded: options.overloaded,
    auditFailed: options.auditFailed,
    lateAppends: options.lateAppends,
    refusing: options.refusing,
  });
  const routes = subjectAccessRoutes(
    options.crnFormat,
    (operation) => [guardSarOperation(options.door, operation)],
    { security: SAR_DOOR_SECURITY },
  );
  const handlers = subjectAccessHandlers(options.subjectAccess, logger);
  app.openapi(routes.getSubjectAccessRequest, handlers.getSubjectAccessRequest);
  app.openapi(routes.getSubjectAccessRequestTemplate, handlers.getSubjectAccessRequestTemplate);
  answerTheRest(app, logger);
  return app;
}
