import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { CrnFormat } from '../../domain/crn.js';
import {
  type AccessDeniedError,
  type DomainError,
  isDomainError,
  type RateLimitedError,
  type StoreUnavailableError,
  type UnauthenticatedError,
  type UpstreamFailedError,
} from '../../domain/errors.js';
import type { AuditWriter, CaseRepository } from '../../domain/needs.js';
import type { IssueQueueTokenDeps } from '../../domain/queue/credentials.js';
import { caseHandlers } from './cases.handlers.js';
import { caseRoutes, type OperationGuard } from './cases.routes.js';
import { type DocsAssets, mountDocs } from './docs.js';
import type { AppEnv, HttpLogger } from './env.js';
import { buildOpenApiDocument } from './openapi.js';
import { admitRequests, guardOperation, type NoPerimeter, type PerimeterOptions } from './perimeter.js';
import { type ProblemInput, ProblemType, problemResponse } from './problem.js';
import { riskHandlers } from './risk.handlers.js';
import { riskRoutes } from './risk.routes.js';
import { createRouter } from './router.js';
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
}

const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** The headers hono/secure-headers would set, with this service's choices, as constants. */
const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Origin-Agent-Cluster', '?1'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=31536000'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Frame-Options', 'DENY'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
];

const silentLogger: HttpLogger = { info: () => {}, error: () => {} };

const REALM = 'case-read-service';

/** RFC 6750 challenge: no error code when no credentials were sent; `invalid_token` otherwise. */
function challengeFor(error: UnauthenticatedError): string {
  if (error.missing) return `Bearer realm="${REALM}"`;
  return `Bearer realm="${REALM}", error="invalid_token", error_description="${error.message.replaceAll('"', "'")}"`;
}

function headersForDomainError(error: DomainError): Record<string, string> {
  if (error.code === 'UNAUTHENTICATED')
    return { 'WWW-Authenticate': challengeFor(error as UnauthenticatedError) };
  if (error.code === 'RATE_LIMITED')
    return { 'Retry-After': String((error as RateLimitedError).retryAfterSeconds) };
  if (error.code === 'STORE_UNAVAILABLE') return { 'Retry-After': '1' };
  return {};
}

function problemForDomainError(error: DomainError): ProblemInput {
  switch (error.code) {
    case 'INVALID_CRN':
      return { status: 400, type: ProblemType.invalidCrn, title: 'Invalid crn', detail: error.message };
    case 'CASE_NOT_FOUND':
      return { status: 404, type: ProblemType.caseNotFound, title: 'Case not found', detail: error.message };
    case 'COMMUNITY_MANAGER_NOT_FOUND':
      return {
        status: 404,
        type: ProblemType.communityManagerNotFound,
        title: 'Community manager not found',
        detail: error.message,
      };
    case 'ACCESS_DENIED':
      return (error as AccessDeniedError).kind === 'client'
        ? {
            status: 403,
            type: ProblemType.clientNotAllowed,
            title: 'Client not allowed',
            detail: error.message,
          }
        : { status: 403, type: ProblemType.accessDenied, title: 'Forbidden', detail: error.message };
    case 'UNAUTHENTICATED':
      return { status: 401, type: ProblemType.unauthenticated, title: 'Unauthorized', detail: error.message };
    case 'ON_BEHALF_OF_NOT_ALLOWED':
      return {
        status: 400,
        type: ProblemType.onBehalfOfNotAllowed,
        title: 'On-behalf-of not allowed',
        detail: error.message,
      };
    case 'PERMISSION_DENIED':
      return {
        status: 403,
        type: ProblemType.permissionDenied,
        title: 'Permission denied',
        detail: error.message,
      };
    case 'RATE_LIMITED':
      return {
        status: 429,
        type: ProblemType.rateLimited,
        title: 'Too many requests',
        detail: error.message,
      };
    case 'INVALID_PAGINATION':
      return {
        status: 400,
        type: ProblemType.invalidRequest,
        title: 'Invalid request',
        detail: error.message,
      };
    case 'NO_QUEUE_CONFIGURED':
      return {
        status: 403,
        type: ProblemType.noQueueConfigured,
        title: 'No queue configured',
        detail: error.message,
      };
    case 'STORE_UNAVAILABLE':
      return {
        status: 503,
        type: ProblemType.storeUnavailable,
        title: 'Service unavailable',
        detail: error.message,
      };
    case 'UPSTREAM_FAILED':
      return { status: 502, type: ProblemType.upstreamFailed, title: 'Bad gateway', detail: error.message };
    case 'UPSTREAM_TIMEOUT':
      return {
        status: 504,
        type: ProblemType.upstreamTimeout,
        title: 'Gateway timeout',
        detail: error.message,
      };
  }
}

/**
 * The Hono application: routes, validation, error mapping and response headers. It uses
 * web-standard APIs only, so it runs on any runtime; the Node listener lives in
 * `src/adapters/node`.
 */
export function createHttpApp(options: HttpAppOptions): OpenAPIHono<AppEnv> {
  const logger = options.logger ?? silentLogger;
  const app = createRouter();

  // Every response header is set here, before the handler runs. Setting one after `next()`
  // would modify a response that already exists, which makes the Node adapter build a full
  // undici Response: measured at 2.5x the cost of the whole request (see README,
  // "Performance"). For the same reason the standard security headers are a constant list
  // set up front rather than hono/secure-headers, which sets them afterwards.
  app.use(async (c, next) => {
    const started = performance.now();
    // The request id is always ours: a client-sent X-Request-Id is ignored, so the audit
    // trail cannot be confused by a caller choosing ids.
    const id = crypto.randomUUID();
    c.set('requestId', id);
    c.header('X-Request-Id', id);
    // The guard changes this to `no-store, private` for on-behalf-of requests.
    c.header('Cache-Control', 'no-store');
    // The API answers JSON only: nothing may be loaded or framed. The docs UI sets its own.
    c.header('Content-Security-Policy', API_CSP);
    for (const [name, value] of SECURITY_HEADERS) c.header(name, value);
    await next();
    const operation = c.get('operation') ?? `${c.req.method} ${c.req.routePath}`;
    const certificate = c.get('certificate');
    if (options.audit && certificate) {
      try {
        await options.audit.append({
          at: new Date(),
          requestId: id,
          clientId: certificate.commonName,
          certificateSerial: certificate.serialNumber,
          onBehalfOf: c.get('caller')?.onBehalfOf?.email ?? null,
          operation,
          crn: c.get('crn') ?? null,
          status: c.res.status,
        });
      } catch (error) {
        logger.error(
          { requestId: id, err: { name: (error as Error).name, message: (error as Error).message } },
          'audit record could not be written; the response was withheld',
        );
        c.res = problemResponse(c, {
          status: 503,
          type: ProblemType.auditUnavailable,
          title: 'Service unavailable',
          detail: 'the request could not be recorded, so it was not answered; try again later',
        });
      }
    }
    const seconds = (performance.now() - started) / 1000;
    options.observe?.(operation, c.res.status, seconds);
    logger.info(
      {
        requestId: id,
        method: c.req.method,
        route: c.req.routePath,
        status: c.res.status,
        ms: Math.round(seconds * 100_000) / 100,
      },
      'request',
    );
  });

  const perimeter = options.perimeter;
  if (!('disabled' in perimeter)) app.use(admitRequests(perimeter));
  /** Steps 6–8 for each operation, with or without the bearer requirement. */
  const guard =
    (bearer: boolean): OperationGuard =>
    (permission) =>
      'disabled' in perimeter ? [] : [guardOperation(perimeter, permission, { bearer })];
  // The bearer requirement covers the three /case operations only (decisions §1 step 6).
  const routes = caseRoutes(options.crnFormat, guard(true));
  const handlers = caseHandlers({ repository: options.repository, crnFormat: options.crnFormat });
  app.openapi(routes.getCase, handlers.getCase);
  app.openapi(routes.getHomeOfficeInterest, handlers.getHomeOfficeInterest);
  app.openapi(routes.getCommunityManagerByCrn, handlers.getCommunityManagerByCrn);
  const token = tokenRoutes(guard(false));
  app.openapi(token.issueQueueToken, tokenHandlers(options.queueTokens).issueQueueToken);
  const risk = riskRoutes(options.crnFormat, guard(false));
  app.openapi(
    risk.getRiskScores,
    riskHandlers({ repository: options.repository, crnFormat: options.crnFormat }).getRiskScores,
  );

  const documentJson = buildOpenApiDocument(app, options.publicUrl ?? '/');
  app.get('/openapi.json', (c) => c.body(documentJson, 200, { 'Content-Type': 'application/json' }));
  if (options.docs) mountDocs(app, options.docs);

  // A known path asked with a method it does not answer: 405 with Allow, not 404.
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

  app.notFound((c) =>
    problemResponse(c, {
      status: 404,
      type: ProblemType.notFound,
      title: 'Not found',
      detail: 'no resource is served at this path',
    }),
  );

  app.onError((error, c: Context<AppEnv>) => {
    if (isDomainError(error)) {
      if (
        error.code === 'ACCESS_DENIED' ||
        error.code === 'UNAUTHENTICATED' ||
        error.code === 'PERMISSION_DENIED' ||
        error.code === 'ON_BEHALF_OF_NOT_ALLOWED'
      ) {
        // The precise reason is for the operator; the client gets only the broad kind.
        logger.info(
          {
            requestId: c.get('requestId'),
            client: c.get('certificate')?.commonName ?? null,
            code: error.code,
            reason: error.code === 'ACCESS_DENIED' ? (error as AccessDeniedError).reason : error.message,
          },
          'request refused',
        );
      }
      if (error.code === 'STORE_UNAVAILABLE') {
        logger.error(
          {
            requestId: c.get('requestId'),
            code: error.code,
            store: (error as StoreUnavailableError).store,
            label: (error as StoreUnavailableError).logLabel,
          },
          'store unavailable',
        );
      }
      if (error.code === 'UPSTREAM_FAILED' || error.code === 'UPSTREAM_TIMEOUT') {
        logger.error(
          {
            requestId: c.get('requestId'),
            client: c.get('certificate')?.commonName ?? null,
            code: error.code,
            upstream: (error as UpstreamFailedError).upstream,
            label: (error as Partial<UpstreamFailedError>).logLabel ?? 'timeout',
          },
          'upstream failure',
        );
      }
      return problemResponse(c, problemForDomainError(error), headersForDomainError(error));
    }
    if (error instanceof HTTPException && error.status < 500) {
      return problemResponse(c, {
        status: error.status,
        type: ProblemType.invalidRequest,
        title: 'Invalid request',
        detail: 'the request could not be processed',
      });
    }
    logger.error(
      {
        requestId: c.get('requestId'),
        route: c.req.routePath,
        err: { name: error.name, message: error.message },
      },
      'unhandled error',
    );
    return problemResponse(c, {
      status: 500,
      type: ProblemType.internal,
      title: 'Internal error',
      detail: 'an unexpected error occurred; quote the requestId to the operator',
    });
  });

  return app;
}
