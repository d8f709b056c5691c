import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Tracer } from '@opentelemetry/api';
import { requiresBearer } from '../../domain/case-operations.js';
import type { CrnFormat } from '../../domain/crn.js';
import { TrailIncompleteError } from '../../domain/errors.js';
import type { IssueQueueTokenDeps } from '../../domain/queue/credentials.js';
import type { AuditWriter } from '../../ports/audit-log.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import { DEFAULT_MAX_IN_FLIGHT, DEFAULT_REQUEST_DEADLINE_MS } from '../../ports/deadline.js';
import { registerCaseReads } from './case-reads.js';
import type { OperationGuard } from './cases.routes.js';
import type { Engine } from './deadline.js';
import { type DocsAssets, mountDocs } from './docs.js';
import { type AppEnv, type HttpLogger, SILENT_LOGGER } from './env.js';
import { type EstDeps, estHandlers, NO_RENEWAL } from './est.handlers.js';
import { estRoutes } from './est.routes.js';
import type { LateAppends } from './late-appends.js';
import { buildOpenApiDocument } from './openapi.js';
import { admitRequests, guardOperation, type NoPerimeter, type PerimeterOptions } from './perimeter.js';
import type { AuditFailure, DeadlineOptions } from './request-cycle.js';
import { respond } from './respond.js';
import { answerTheRest, cycledRouter } from './router.js';
import { type SubjectAccessOptions, subjectAccessHandlers } from './subject-access.handlers.js';
import { subjectAccessRoutes } from './subject-access.routes.js';
import { tokenHandlers } from './token.handlers.js';
import { tokenRoutes } from './token.routes.js';

export interface HttpAppOptions {
  readonly repository: CaseRepository;
  /** `POST /token`: the credentials issuer, the default role and the credential lifetime. */
  readonly queueTokens: IssueQueueTokenDeps;
  /** The security perimeter (decisions §1 steps 2–8); `{ disabled: true }` only in tests of the core. */
  readonly perimeter: PerimeterOptions | NoPerimeter;
  readonly crnFormat: CrnFormat;
  readonly logger?: HttpLogger;
  /** When given, the Swagger UI is served at /docs from these local assets. */
  readonly docs?: DocsAssets;
  /** The `servers[0].url` of the OpenAPI document. */
  readonly publicUrl?: string;
  /**
   * The audit trail: one record for every request that reached step 3 (a client
   * certificate was identified), appended before the response leaves. If it cannot be
   * written the response is replaced by a 503: nothing is answered that is not recorded.
   */
  readonly audit?: AuditWriter;
  /** Called once per answered request, for metrics: operation id (or route), status, seconds. */
  readonly observe?: (operation: string, status: number, seconds: number) => void;
  /** When given (tracing on), a server span for every request; see `tracing.ts`. */
  readonly tracer?: Tracer;
  /** Certificate renewal over EST (decisions §12); without it both EST routes answer 501. */
  readonly certificates?: EstDeps;
  /** Deadlines and overload (decisions §11); the defaults of `REQUEST_DEADLINE_MS` and `MAX_IN_FLIGHT` when not given. */
  readonly deadlines?: DeadlineOptions;
  /** For metrics: a deadline passed on `engine`; a request refused as overload; the in-flight count. */
  readonly deadlineExceeded?: (engine: Engine) => void;
  readonly overloaded?: () => void;
  /** For metrics: the audit store refused a record (its answer withheld, or the record lost). */
  readonly auditFailed?: (outcome: AuditFailure) => void;
  readonly inFlight?: (count: () => number) => void;
  /** Where the records of answers already given wait to be stored: the service settles them at shutdown. */
  readonly lateAppends?: LateAppends;
  /** Why no request may be answered now, if none may (see `RequestCycleOptions.refusing`). */
  readonly refusing?: () => string | undefined;
  /** The subject access request (decisions §22); without it (tests of the core) it answers 503 trail-unavailable. */
  readonly subjectAccess?: SubjectAccessOptions;
}

/** No trail to read: every subject access request is refused as the trail being unavailable. */
const NO_SUBJECT_ACCESS: SubjectAccessOptions = {
  disclosures: {
    of: () => Promise.reject(new TrailIncompleteError('no audit trail is configured for subject access')),
  },
  now: () => new Date(),
  template: '',
};

const DEFAULT_DEADLINES: DeadlineOptions = {
  requestMs: DEFAULT_REQUEST_DEADLINE_MS,
  maxInFlight: DEFAULT_MAX_IN_FLIGHT,
};

/**
 * The Hono application: the request cycle, the perimeter, the routes with their guards, and
 * what answers everything else. It uses web-standard APIs only, so it runs on any runtime;
 * the mutual-TLS listener lives in `src/adapters/tls-listener`.
 */
export function createHttpApp(options: HttpAppOptions): OpenAPIHono<AppEnv> {
  const logger = options.logger ?? SILENT_LOGGER;
  const { perimeter, repository, crnFormat } = options;
  const app = cycledRouter(options.tracer, {
    logger,
    audit: options.audit,
    observe: options.observe,
    deadlines: options.deadlines ?? DEFAULT_DEADLINES,
    deadlineExceeded: options.deadlineExceeded,
    overloaded: options.overloaded,
    auditFailed: options.auditFailed,
    inFlight: options.inFlight,
    lateAppends: options.lateAppends,
    refusing: options.refusing,
  });
  if (!('disabled' in perimeter)) app.use(admitRequests(perimeter));

  /** Steps 6–8 for each operation; the bearer JWT where the case operations' table asks for it (decisions §1 step 6). */
  const guard: OperationGuard = (permission) =>
    'disabled' in perimeter
      ? []
      : [guardOperation(perimeter, permission, { bearer: requiresBearer(permission) })];
  registerCaseReads(app, { format: crnFormat, guard, repository });
  app.openapi(tokenRoutes(guard).issueQueueToken, tokenHandlers(options.queueTokens).issueQueueToken);
  const est = estRoutes(guard);
  const estHandler = estHandlers(options.certificates ?? NO_RENEWAL);
  app.openapi(est.simpleReenroll, estHandler.simpleReenroll);
  app.openapi(est.caCerts, estHandler.caCerts);
  const sar = subjectAccessRoutes(crnFormat, guard);
  const sarHandler = subjectAccessHandlers(options.subjectAccess ?? NO_SUBJECT_ACCESS, logger);
  app.openapi(sar.getSubjectAccessRequest, sarHandler.getSubjectAccessRequest);
  app.openapi(sar.getSubjectAccessRequestTemplate, sarHandler.getSubjectAccessRequestTemplate);

  const documentJson = buildOpenApiDocument(app, options.publicUrl ?? '/');
  app.get('/openapi.json', (c) => respond(c, 200, documentJson, 'application/json'));
  if (options.docs) mountDocs(app, options.docs);
  answerTheRest(app, logger);
  return app;
}
