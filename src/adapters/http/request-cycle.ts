import type { Context, MiddlewareHandler } from 'hono';
import { ANSWER_WITHHELD, type AuditRecord } from '../../domain/audit/record.js';
import type { Crn } from '../../domain/crn.js';
import { type DomainError, StoreUnavailableError, UpstreamTimeoutError } from '../../domain/errors.js';
import type { AuditWriter } from '../../ports/audit-log.js';
import { DeadlineExceededError, remainingMs } from '../../ports/deadline.js';
import { Deadlines, type Engine, EXPIRED, InFlight } from './deadline.js';
import type { AccessEntry, AppEnv, HttpLogger } from './env.js';
import { errorHandler } from './errors.js';
import { LateAppends } from './late-appends.js';
import { ProblemType, problemResponse } from './problem.js';
import { startHeaders } from './respond.js';

export interface DeadlineOptions {
  /** Each request's deadline, from when it is admitted (`REQUEST_DEADLINE_MS`). */
  readonly requestMs: number;
  /** At most this many requests wait on engines at once (`MAX_IN_FLIGHT`). */
  readonly maxInFlight: number;
  /** The engines that are another service: held past the deadline, a 504, not a 503. */
  readonly upstream?: ReadonlySet<Engine>;
}

export interface RequestCycleOptions {
  readonly logger: HttpLogger;
  /** Appended before the response leaves; see `HttpAppOptions.audit`. */
  readonly audit?: AuditWriter | undefined;
  readonly observe?: ((operation: string, status: number, seconds: number) => void) | undefined;
  readonly deadlines: DeadlineOptions;
  /** Called when a request's deadline passed while it waited on `engine`. */
  readonly deadlineExceeded?: ((engine: Engine) => void) | undefined;
  /** Called when a request was refused because `maxInFlight` were waiting. */
  readonly overloaded?: (() => void) | undefined;
  /** Handed the in-flight count, for a gauge read when metrics are scraped. */
  readonly inFlight?: ((count: () => number) => void) | undefined;
  /** Called when the audit store refused a record: its answer withheld, or the record lost. */
  readonly auditFailed?: ((outcome: AuditFailure) => void) | undefined;
  /** Where the records of answers already given wait to be stored (the service settles them at shutdown); one of its own when none is given. */
  readonly lateAppends?: LateAppends | undefined;
  /**
   * Why no request may be answered now, if none may: the audit trail is known to be short (a
   * quorum of its witnesses holds what it cannot extend), so nothing is recorded on it.
   */
  readonly refusing?: (() => string | undefined) | undefined;
}

/**
 * An audit record the store refused: `withheld`, the answer was withheld for it (503
 * audit-unavailable, recorded later); `lost`, it could not be stored after every attempt.
 */
export type AuditFailure = 'withheld' | 'lost';

/**
 * What the cycle reads of a request's validated input: the crn route's `Crn` (its schema
 * parses it), in its path or its query, absent when the route has no crn or the request never
 * got that far.
 */
type ValidatedCrn = {
  out: { param: { crn?: Crn } | undefined; query: { crn?: Crn } | undefined };
};

const DISPLAY: Record<Engine, string> = {
  accessStore: 'access store',
  rateLimitStore: 'rate-limit store',
  jwks: 'bearer key set',
  caseStore: 'case store',
  credentials: 'credentials issuer',
  auditStore: 'audit store',
};

/**
 * A response of the request's own headers as they are now, which nothing the abandoned
 * handler does later can change: it is given a copy to write to instead.
 */
function detached(c: Context<AppEnv>, build: () => Response): Response {
  const own = { ...c.get('headers') };
  c.set('headers', own);
  const response = build();
  c.set('headers', { ...own });
  return response;
}

/**
 * What happens around every request, first in and last out:
 *
 * - its id and response headers before anything else runs;
 * - 503 `audit-unavailable` at once, not audited, while `refusing` says why (a trail known
 *   to be short: nothing more is recorded on it);
 * - a place among the requests waiting on engines, or 503 `overloaded` at once (with
 *   `Retry-After: 1`, before any engine call; not audited: it is refused before the API key
 *   is read, like a failed handshake, and recording it would queue on the audit store that is
 *   most likely the one stalled);
 * - its deadline: the handler, then the audit append, are raced against it; at the deadline
 *   the request is answered 503 `store-unavailable` (504 `upstream-timeout` for another
 *   service) naming nothing but the kind of engine, and what it was waiting on is left;
 * - after the handler, its audit record: the response leaves only once the record is
 *   stored. A record that could not be stored, or was still pending at the deadline,
 *   withholds the answer (503), and the 503 is recorded once the store takes it (tried
 *   again for about two minutes): if the first record is stored late after all, the second,
 *   same request id, says `answer-withheld`, so the trail never claims an answer that was
 *   not given. A request already answered at its deadline is recorded without waiting (it
 *   disclosed nothing);
 * - its metrics and its access-log line.
 */
export function requestCycle({
  logger,
  audit,
  observe,
  deadlines,
  deadlineExceeded,
  overloaded,
  inFlight: exposeInFlight,
  auditFailed,
  lateAppends,
  refusing,
}: RequestCycleOptions): MiddlewareHandler<AppEnv, string, ValidatedCrn> {
  const accessLog = logger.request
    ? logger.request.bind(logger)
    : (entry: AccessEntry) => logger.info({ ...entry }, 'request');
  const onError = errorHandler(logger);
  const gate = new InFlight(deadlines.maxInFlight);
  const clock = new Deadlines(deadlines.requestMs);
  exposeInFlight?.(() => gate.size);
  const upstream = deadlines.upstream ?? new Set<Engine>();

  const finish = (c: Context<AppEnv>, started: number, operation: string) => {
    const status = c.res.status;
    const seconds = (performance.now() - started) / 1000;
    observe?.(operation, status, seconds);
    accessLog({
      requestId: c.get('requestId'),
      method: c.req.method,
      route: c.req.routePath,
      status,
      ms: Math.round(seconds * 100_000) / 100,
    });
  };

  /** The answer at the deadline, as the error handler answers that engine's failure. */
  const pastDeadline = (c: Context<AppEnv>, engine: Engine): Response => {
    deadlineExceeded?.(engine);
    const error: DomainError = upstream.has(engine)
      ? new UpstreamTimeoutError(DISPLAY[engine])
      : new StoreUnavailableError(DISPLAY[engine], 'deadline');
    return detached(c, () => onError(error, c));
  };

  // The records of answers already given: stored later, part of the drain at shutdown.
  const late = lateAppends ?? new LateAppends({ audit, logger, lost: () => auditFailed?.('lost') });
  const appendLater = (record: AuditRecord) => late.add(record);

  return async (c, next) => {
    const started = performance.now();
    // The request id is always ours: a client-sent X-Request-Id is ignored, so the audit
    // trail cannot be confused by a caller choosing ids.
    const id = crypto.randomUUID();
    c.set('requestId', id);
    c.set('headers', startHeaders(id));
    const refusal = refusing?.();
    if (refusal !== undefined) {
      // Not audited: the trail is the one known to be short. No engine is called.
      c.res = problemResponse(
        c,
        { status: 503, type: ProblemType.auditUnavailable, title: 'Service unavailable', detail: refusal },
        { 'Retry-After': '60' },
      );
      finish(c, started, `${c.req.method} ${c.req.routePath}`);
      return;
    }
    if (!gate.enter()) {
      overloaded?.();
      c.res = problemResponse(
        c,
        {
          status: 503,
          type: ProblemType.overloaded,
          title: 'Service unavailable',
          detail: 'too many requests are waiting on this instance; try again shortly',
        },
        { 'Retry-After': '1' },
      );
      finish(c, started, `${c.req.method} ${c.req.routePath}`);
      return;
    }
    const deadline = clock.start(started);
    c.set('deadline', deadline);
    try {
      const expired = (await deadline.race(next())) === EXPIRED;
      // Or the handler's answer came with no time left: an upstream call given up at the
      // deadline itself answers 504 in the instant the deadline's own timer is due, and the
      // audit append that would follow has no time at all. Either way the request is answered
      // as at the deadline and its record appended after; a refusal the handler made stands,
      // data is never sent without its record.
      const answeredAtDeadline = expired || remainingMs(deadline) === 0;
      if (expired || (answeredAtDeadline && c.res.status < 400)) {
        c.res = pastDeadline(c, deadline.engine ?? 'accessStore');
      } else if (answeredAtDeadline) {
        // The refusal made in the deadline's last instant stands, and the deadline passed all the same.
        deadlineExceeded?.(deadline.engine ?? 'accessStore');
      }
      const operation = c.get('operation') ?? `${c.req.method} ${c.req.routePath}`;
      const caller = c.get('auditedAs');
      if (audit && caller) {
        const record: AuditRecord = {
          at: new Date(),
          requestId: id,
          clientId: caller.clientId,
          certificateSerial: caller.certificateSerial,
          onBehalfOf: c.get('caller')?.onBehalfOf?.email ?? null,
          operation,
          // The crn of the request as its route validated it (in its path, or the subject access
          // request's query); none when refused before that.
          crn: (c.req.valid('param')?.crn ?? c.req.valid('query')?.crn)?.value ?? null,
          status: c.res.status,
          problem: c.get('problem') ?? null,
          access: c.get('access') ?? null,
          issued: c.get('issued') ?? null,
        };
        if (answeredAtDeadline) {
          appendLater(record);
        } else {
          deadline.engine = 'auditStore';
          let appending: Promise<void>;
          try {
            appending = Promise.resolve(audit.append(record, deadline));
          } catch (error) {
            appending = Promise.reject(error);
          }
          // Stored: it resolves with nothing. Refused: the error. Not in time: EXPIRED.
          const outcome = await deadline.race(appending);
          if (outcome !== undefined) {
            if (outcome === EXPIRED || outcome instanceof DeadlineExceededError) {
              c.res = pastDeadline(c, 'auditStore');
            } else {
              const error = outcome as Error;
              auditFailed?.('withheld');
              logger.error(
                { requestId: id, err: { name: error.name, message: error.message } },
                'audit record could not be written; the response was withheld',
              );
              c.res = problemResponse(
                c,
                {
                  status: 503,
                  type: ProblemType.auditUnavailable,
                  title: 'Service unavailable',
                  detail: 'the request could not be recorded, so it was not answered; try again later',
                },
                { 'Retry-After': '1' },
              );
            }
            const told: AuditRecord = {
              ...record,
              status: c.res.status,
              problem: c.get('problem') ?? null,
              access: null,
            };
            // What the client was told goes in the trail once the store takes it; after the
            // first record, if that is stored late after all, saying the answer was withheld.
            // It waits among the late appends from now, whatever holds the first.
            late.follow(id, appending, (firstStored) =>
              firstStored
                ? { ...told, at: new Date(), problem: ANSWER_WITHHELD }
                : { ...told, at: new Date() },
            );
          }
        }
      }
      finish(c, started, operation);
    } finally {
      clock.settle(deadline);
      gate.leave();
    }
  };
}
