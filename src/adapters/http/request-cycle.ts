import type { MiddlewareHandler } from 'hono';
import type { Crn } from '../../domain/crn.js';
import type { AuditWriter } from '../../ports/audit-log.js';
import type { AccessEntry, AppEnv, HttpLogger } from './env.js';
import { ProblemType, problemResponse } from './problem.js';
import { startHeaders } from './respond.js';

export interface RequestCycleOptions {
  readonly logger: HttpLogger;
  /** Appended before the response leaves; see `HttpAppOptions.audit`. */
  readonly audit?: AuditWriter | undefined;
  readonly observe?: ((operation: string, status: number, seconds: number) => void) | undefined;
}

/**
 * What happens around every request, first in and last out: its id and response headers
 * before anything else runs; after the handler, its audit record (the response is withheld
 * with a 503 if the record cannot be stored), its metrics, and its access-log line.
 */
/**
 * What the cycle reads of a request's validated input: the crn route's `Crn` (its schema
 * parses it), absent when the route has no crn or the request never got that far.
 */
type ValidatedCrn = { out: { param: { crn?: Crn } | undefined } };

export function requestCycle({
  logger,
  audit,
  observe,
}: RequestCycleOptions): MiddlewareHandler<AppEnv, string, ValidatedCrn> {
  const accessLog = logger.request
    ? logger.request.bind(logger)
    : (entry: AccessEntry) => logger.info({ ...entry }, 'request');
  return async (c, next) => {
    const started = performance.now();
    // The request id is always ours: a client-sent X-Request-Id is ignored, so the audit
    // trail cannot be confused by a caller choosing ids.
    const id = crypto.randomUUID();
    c.set('requestId', id);
    c.set('headers', startHeaders(id));
    await next();
    const operation = c.get('operation') ?? `${c.req.method} ${c.req.routePath}`;
    const certificate = c.get('certificate');
    if (audit && certificate) {
      try {
        await audit.append({
          at: new Date(),
          requestId: id,
          clientId: certificate.commonName,
          certificateSerial: certificate.serialNumber,
          onBehalfOf: c.get('caller')?.onBehalfOf?.email ?? null,
          operation,
          // The crn of the request as its route validated it; none when refused before that.
          crn: c.req.valid('param')?.crn?.value ?? null,
          status: c.res.status,
          problem: c.get('problem') ?? null,
          access: c.get('access') ?? null,
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
    const status = c.res.status;
    const seconds = (performance.now() - started) / 1000;
    observe?.(operation, status, seconds);
    accessLog({
      requestId: id,
      method: c.req.method,
      route: c.req.routePath,
      status,
      ms: Math.round(seconds * 100_000) / 100,
    });
  };
}
