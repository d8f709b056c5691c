import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Engine } from '../../adapters/http/deadline.js';
import type { AppEnv, HttpLogger } from '../../adapters/http/env.js';
import type { LateAppends } from '../../adapters/http/late-appends.js';
import { createSarApp } from '../../adapters/http/sar-app.js';
import type { SubjectAccessOptions } from '../../adapters/http/subject-access.handlers.js';
import { JoseSarTokenVerifier } from '../../adapters/jose/sar-token-verifier.js';
import type { Tracing } from '../../adapters/opentelemetry/tracing.js';
import type { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import type { AuditWriter } from '../../ports/audit-log.js';
import { systemClock } from '../../ports/clock.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';
import type { SarTokenVerifier } from '../../ports/sar-token-verifier.js';
import { configured } from '../config-error.js';
import type { Config } from './config.js';

/**
 * The SAR service's door in `serve` (decisions §23): its token verifier, made at start with
 * the other verifiers (a key set file that cannot be read stops the start, naming
 * `SAR_AUTH_JWKS`), and its app, over what the main listener's app is built over: the same
 * audit trail and late appends, the same subject access wiring, rate limiter and metrics.
 */

/** The door's token verifier from `SAR_AUTH_*`; none without `SAR_PORT`. */
export function createSarTokenVerifier(config: Config): SarTokenVerifier | undefined {
  if (config.SAR_PORT === undefined) return undefined;
  // Both are required with SAR_PORT: the configuration has refused their absence already.
  return configured(
    'SAR_AUTH_JWKS',
    () =>
      new JoseSarTokenVerifier({ jwks: config.SAR_AUTH_JWKS ?? '', issuer: config.SAR_AUTH_ISSUER ?? '' }),
  );
}

/** What the door's app is built over: the verifier, and the parts it shares with the main listener's app. */
export interface SarDoorParts {
  readonly config: Config;
  readonly verifier: SarTokenVerifier;
  readonly metrics: PrometheusMetrics;
  readonly tracing: Tracing | undefined;
  readonly logger: HttpLogger;
  readonly limiter: RateLimiter;
  readonly audit: AuditWriter;
  readonly late: LateAppends;
  readonly subjectAccess: SubjectAccessOptions;
  /** The engines that are another service (504 at the deadline), as the main listener's. */
  readonly upstream: ReadonlySet<Engine>;
  /** Why no request may be answered now, if none may: as the main listener's. */
  readonly refusing: () => string | undefined;
}

/** The door's app: the two subject access routes behind the SAR service's token. */
export function sarAppOf(parts: SarDoorParts): OpenAPIHono<AppEnv> {
  const { config, metrics, tracing } = parts;
  return createSarApp({
    crnFormat: config.CRN_PATTERN,
    door: {
      verifier: parts.verifier,
      role: config.SAR_AUTH_ROLE,
      rateLimit: { limiter: parts.limiter, defaultQuota: config.RATE_LIMIT_DEFAULT },
      clock: systemClock,
    },
    subjectAccess: parts.subjectAccess,
    logger: parts.logger,
    audit: parts.audit,
    lateAppends: parts.late,
    refusing: parts.refusing,
    // The same series as the main listener's, by operation and status (the in-flight gauge is its alone).
    observe: metrics.observe,
    ...(tracing ? { tracer: tracing.tracer } : {}),
    deadlines: {
      requestMs: config.SAR_REQUEST_DEADLINE_MS,
      maxInFlight: config.MAX_IN_FLIGHT,
      upstream: parts.upstream,
    },
    deadlineExceeded: metrics.deadlineExceeded,
    overloaded: metrics.overloaded,
    auditFailed: metrics.auditAppendFailed,
  });
}
