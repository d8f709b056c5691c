import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Hono } from 'hono';
import type { AppEnv } from '../../adapters/http/env.js';
import { createLogger, type Logger } from '../../adapters/pino/logger.js';
import { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import type { RunningServer, TlsFiles } from '../../adapters/tls-listener/server.js';
import type { ReloadableTls } from '../../ports/stores.js';
import { CertificateExpiry } from '../certificate-expiry.js';
import type { TlsWatch } from '../tls-reload.js';
import { checkTrailOrigin, readAuditSigner, startCheckpointing } from './audit-wiring.js';
import { readAuditWitnessPolicy, startWitnessing } from './audit-witnesses.js';
import { certificateWatch } from './certificate-watch.js';
import type { Config } from './config.js';
import { createTokenVerifier, httpAppOf, managementOf, type ServiceParts } from './http-app.js';
import { createCertificateIssuer, createCredentialsIssuer } from './issuers.js';
import { createSarTokenVerifier } from './sar-door.js';
import { closeQuietly, openStores } from './service-stores.js';
import { storeWiring } from './store-kinds.js';
import { listenerTlsPaths, readListenerTls, reloadListenerTls } from './tls-files.js';
import { startTracingIf } from './tracing.js';

/**
 * The composition root of `serve`: configuration in, adapters built, the app wired, and the
 * service's life (its stores opened, its certificates watched, everything closed in order).
 * Each part is built by a file of its own in this folder: `tls-files.ts` (the listener's
 * certificates and keys), `issuers.ts`, `tracing.ts`, `audit-wiring.ts`, `service-stores.ts`
 * and `http-app.ts` (the API and the management app); this file only puts them together.
 * Only the files of this folder choose adapters (the dependency rules enforce it): besides
 * the service's, `store-kinds.ts` for the stores, `runtime.ts` for the listener, and
 * `operator.ts` (with `audit-keys.ts` and `openapi-document.ts`) for what the operator
 * commands use.
 */

/** The service's configuration, with the store kinds this service knows (its home is `store-kinds.ts`). */
export { loadServiceConfig } from './store-kinds.js';
/** `serve` logs through pino (JSON lines on stdout). */
export { createLogger, type Logger };

export interface Service {
  readonly app: OpenAPIHono<AppEnv>;
  /** The SAR service's door's app, for its own listener on `SAR_PORT` (decisions §23); none without it. */
  readonly sar: OpenAPIHono<AppEnv> | undefined;
  /** The management listener's app: health and metrics. */
  readonly management: Hono;
  readonly tls: TlsFiles;
  /**
   * Starts reloading the certificates (the listener's, and the SAR door's, which serves the
   * same certificate; the stores') when their files change and on `reloadAll` (SIGHUP), and
   * checking them for expiry.
   */
  watchCertificates(server: RunningServer, sar?: RunningServer): TlsWatch;
  readonly stores: {
    readonly cases: string;
    readonly access: string;
    readonly audit: string;
    readonly rateLimit: string;
    readonly credentials: string;
  };
  /** Shutdown has begun: readiness answers 503 from now on. */
  beginShutdown(): void;
  /**
   * Part of the drain (decisions §18): the records of answers already given, still waiting to
   * be stored, are tried until `until` (performance.now() ms: the end of the grace); each one
   * not stored then is counted and logged as lost. How many waited, and how many were lost.
   */
  settleLateAudit(until: number): Promise<{ readonly waiting: number; readonly lost: number }>;
  /** Writes any pending audit record, then closes every store. */
  close(): Promise<void>;
}

/**
 * Closes what the service opened, the audit trail first: anything pending is written (and,
 * with a signing key, a last checkpoint taken) before the rest goes; tracing last, so the
 * spans of the drain are exported too.
 */
function closerOf({
  stores,
  checkpointing,
  witnessing,
  credentialsIssuer,
  tracing,
}: ServiceParts): () => Promise<void> {
  return async () => {
    // The witnesses are sent the last checkpoint, each given a second at most; one that
    // misses it is sent it at the next start (it is the newest then).
    await witnessing?.stop();
    await checkpointing?.stop();
    await witnessing?.last();
    await stores.audit.close();
    await Promise.allSettled([stores.cases.close(), stores.access.close(), stores.rateLimit.close()]);
    credentialsIssuer.close?.();
    await tracing?.shutdown();
  };
}

/**
 * The service, in steps: its TLS files and keys read and checked, tracing started, the
 * issuers and the token verifier made, the stores opened, then the API, the management
 * listener and the certificate watch built over them.
 */
export async function buildService(config: Config, logger: Logger): Promise<Service> {
  const listenerTls = readListenerTls(config);
  const auditSigner = await readAuditSigner(config);
  const witnessPolicy = readAuditWitnessPolicy(config, auditSigner);
  const tracing = await startTracingIf(config);
  const credentialsIssuer = await createCredentialsIssuer(config, tracing);
  const certificateIssuer = await createCertificateIssuer(config, listenerTls.files.clientCa, tracing);
  const verifier = createTokenVerifier(config);
  const sarVerifier = createSarTokenVerifier(config);
  const metrics = new PrometheusMetrics();
  const expiry = new CertificateExpiry({
    certificates: metrics.certificates,
    client: metrics.clientCertificate,
    warn: (fields, message) => logger.warn(fields, message),
    now: () => new Date(),
  });
  const wiring = storeWiring(config.CRN_PATTERN, (level, fields, message) => logger[level](fields, message), {
    onRateLimitTransition: metrics.rateLimitStoreTransition,
    onAccessListenerFailure: metrics.accessListenerFailed,
    observeUpstream: metrics.upstreamCall,
    requestDeadlineMs: config.REQUEST_DEADLINE_MS,
    ...(tracing ? { tracing } : {}),
  });
  const stores = await openStores(config, wiring);
  if (auditSigner) {
    try {
      await checkTrailOrigin(config, stores.audit.value);
    } catch (error) {
      await closeQuietly([stores.rateLimit, stores.audit, stores.access, stores.cases]);
      throw error;
    }
  }
  let witnessing: Awaited<ReturnType<typeof startWitnessing>> | undefined;
  try {
    witnessing =
      witnessPolicy === undefined
        ? undefined
        : await startWitnessing(config, witnessPolicy, stores.audit.value, logger, metrics);
  } catch (error) {
    // A quorum of the witnesses holds what this trail cannot extend: nothing is served.
    await closeQuietly([stores.rateLimit, stores.audit, stores.access, stores.cases]);
    throw error;
  }
  const checkpointing = auditSigner
    ? startCheckpointing(
        config,
        auditSigner,
        stores.audit.value,
        logger,
        metrics,
        () => void witnessing?.witnessing.nudge(),
      )
    : undefined;
  const parts: ServiceParts = {
    config,
    logger,
    metrics,
    tracing,
    stores,
    credentialsIssuer,
    certificateIssuer,
    verifier,
    sarVerifier,
    expiry,
    checkpointing,
    auditSigner,
    witnessing,
  };
  const { management, beginShutdown } = managementOf(parts);
  let built: Awaited<ReturnType<typeof httpAppOf>>;
  try {
    built = await httpAppOf(parts);
  } catch (error) {
    // A setting refused once the stores are open (AUDIT_ARCHIVE_DIR not this trail's): all closed again.
    await closerOf(parts)().catch(() => {});
    throw error;
  }
  const { app, sar, late } = built;
  return {
    app,
    sar,
    settleLateAudit: (until) => late.settle(until),
    management,
    tls: listenerTls.files,
    watchCertificates: certificateWatch(
      {
        paths: listenerTlsPaths(config),
        certificates: listenerTls.certificates,
        read: () => reloadListenerTls(config),
      },
      // The stores' own client certificates and CAs (the upstream's, Redis's, PostgreSQL's).
      [stores.cases.tls, stores.access.tls, stores.audit.tls, stores.rateLimit.tls].filter(
        (tls): tls is ReloadableTls => tls !== undefined,
      ),
      { expiry, metrics, logger, intervalMs: config.TLS_WATCH_MS },
    ),
    stores: {
      cases: stores.cases.description,
      access: stores.access.description,
      audit: stores.audit.description,
      rateLimit: stores.rateLimit.description,
      credentials: config.CREDENTIALS_ISSUER,
    },
    beginShutdown,
    close: closerOf(parts),
  };
}
