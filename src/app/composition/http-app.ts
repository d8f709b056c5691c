import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Hono } from 'hono';
import { sha256Hasher } from '../../adapters/crypto/api-keys.js';
import { createHttpApp } from '../../adapters/http/app.js';
import type { Engine } from '../../adapters/http/deadline.js';
import type { DocsAssets } from '../../adapters/http/docs.js';
import type { AppEnv, HttpLogger } from '../../adapters/http/env.js';
import { NO_RENEWAL } from '../../adapters/http/est.handlers.js';
import { type IdentityReader, trustedGatewayIdentity } from '../../adapters/http/identity.js';
import { LateAppends } from '../../adapters/http/late-appends.js';
import { createManagementApp } from '../../adapters/http/management.js';
import type { PerimeterOptions } from '../../adapters/http/perimeter.js';
import { JoseTokenVerifier } from '../../adapters/jose/token-verifier.js';
import type { Tracing } from '../../adapters/opentelemetry/tracing.js';
import { accessLogOf, type Logger } from '../../adapters/pino/logger.js';
import type { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import { peerCertificateOf } from '../../adapters/tls-listener/peer-certificate.js';
import { upstreamStores } from '../../adapters/upstream/store-kind.js';
import type { CertificateIssuer } from '../../ports/certificate-issuer.js';
import type { CertificateRequests } from '../../ports/certificate-requests.js';
import type { CheckpointSigner } from '../../ports/checkpoint-keys.js';
import { systemClock } from '../../ports/clock.js';
import type { CredentialsIssuer } from '../../ports/credentials-issuer.js';
import type { SarTokenVerifier } from '../../ports/sar-token-verifier.js';
import type { AuditCheckpointing } from '../audit/checkpointing.js';
import type { TrailBehind } from '../audit/witness-standing.js';
import type { CertificateExpiry } from '../certificate-expiry.js';
import { configured } from '../config-error.js';
import { countedFor, readPreviousKeys } from './audit-wiring.js';
import type { Config } from './config.js';
import { sarAppOf } from './sar-door.js';
import { serviceInfoOf } from './service-info.js';
import type { ServiceStores } from './service-stores.js';
import { subjectAccessOf } from './subject-access.js';
import { tracedStore } from './tracing.js';

/**
 * The HTTP side of `serve`: the API (the routes over the stores, behind the perimeter, with
 * the audit trail, deadlines and metrics) and the management listener's app. Only `serve`
 * loads this file, and with it Hono and the HTTP adapter.
 */

/** Reads the Swagger UI assets from the swagger-ui-dist package, once. */
export function loadDocsAssets(): DocsAssets {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve('swagger-ui-dist/package.json'));
  return {
    css: readFileSync(join(root, 'swagger-ui.css'), 'utf8'),
    bundleJs: readFileSync(join(root, 'swagger-ui-bundle.js'), 'utf8'),
  };
}

/** What the HTTP app logs through: pino, with the access line written by its own template. */
function httpLoggerOf(logger: Logger): HttpLogger {
  const request = accessLogOf(logger);
  return {
    info: (fields, message) => logger.info(fields, message),
    error: (fields, message) => logger.error(fields, message),
    ...(request ? { request } : {}),
  };
}

const tlsPeerIdentity: IdentityReader = (_request, env) => peerCertificateOf(env);

/**
 * How CSRs are read: @peculiar/x509 and its ASN.1 modules (some MiB of memory) are loaded
 * only by a service that issues certificates. Without an issuer no CSR is ever read: both
 * EST routes answer 501 before reading one.
 */
async function certificateRequestsFor(issuer: CertificateIssuer | null): Promise<CertificateRequests> {
  if (issuer === null) return NO_RENEWAL.requests;
  return (await import('../../adapters/x509/certificate-requests.js')).x509CertificateRequests;
}

/** The bearer-token verifier, from `BEARER_*`; a key set that cannot be read is a ConfigError. */
export const createTokenVerifier = (config: Config): JoseTokenVerifier =>
  configured(
    'BEARER_JWKS',
    () =>
      new JoseTokenVerifier({
        bearer:
          config.BEARER_MODE === 'off'
            ? null
            : {
                jwks: config.BEARER_JWKS ?? '',
                issuer: config.BEARER_ISSUER ?? '',
                audience: config.BEARER_AUDIENCE ?? '',
              },
      }),
  );

/** What the service is built from before its HTTP app: read, checked, opened. */
export interface ServiceParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: PrometheusMetrics;
  readonly tracing: Tracing | undefined;
  readonly stores: ServiceStores;
  readonly credentialsIssuer: CredentialsIssuer & { close?(): void };
  readonly certificateIssuer: CertificateIssuer | null;
  readonly verifier: JoseTokenVerifier;
  /** The SAR service's door's token verifier, with `SAR_PORT` (decisions §23). */
  readonly sarVerifier: SarTokenVerifier | undefined;
  readonly expiry: CertificateExpiry;
  readonly checkpointing: AuditCheckpointing | undefined;
  /** The audit checkpoints' signing key (AUDIT_SIGNING_KEY), when given. */
  readonly auditSigner: CheckpointSigner | undefined;
  /** The witnesses' submitting loop, with AUDIT_WITNESS_POLICY: stopped before the last checkpoint, which `last` sends. */
  readonly witnessing?:
    | {
        stop(): Promise<void>;
        last(): Promise<void>;
        /** Once a quorum of the witnesses showed the trail short: why every request is refused. */
        readonly witnessing: { readonly behind: TrailBehind | undefined };
      }
    | undefined;
}

/** The security perimeter (decisions §1 steps 2–8) over the access and rate-limit stores. */
async function perimeterOf(parts: ServiceParts): Promise<PerimeterOptions> {
  const { config, logger, tracing, stores, verifier, expiry } = parts;
  const access = stores.access.value;
  return {
    rateLimit: {
      limiter: tracedStore(tracing, stores.rateLimit.value, config.RATE_LIMIT_STORE),
      defaultQuota: config.RATE_LIMIT_DEFAULT,
    },
    identify:
      config.IDENTITY_MODE === 'trusted-header'
        ? trustedGatewayIdentity(
            new Set(config.TRUSTED_GATEWAYS),
            tlsPeerIdentity,
            // Loaded only behind a gateway: the X.509 reader of a forwarded certificate.
            (await import('../../adapters/x509/forwarded-certificate.js')).cachedForwardedCertificates(),
          )
        : tlsPeerIdentity,
    directory: tracedStore(tracing, access, config.ACCESS_STORE),
    hasher: sha256Hasher,
    clock: systemClock,
    verifier,
    bearerMode: config.BEARER_MODE,
    renewWithinDays: config.CLIENT_CERT_RENEW_WITHIN_DAYS,
    // The certificate a client presents, when its end is known: its expiry metric and
    // warnings, and, when it is another than before, recorded for `clients list`.
    presented: (client, certificate) => {
      const { serialNumber, notAfter } = certificate;
      if (notAfter === null || !expiry.presented(client, serialNumber, notAfter)) return;
      access
        .noteCertificate({ clientId: client, serialNumber, notAfter, seenAt: new Date() })
        .catch((error: unknown) =>
          logger.warn(
            { client, err: { message: (error as Error).message } },
            'the certificate a client presented could not be recorded for clients list',
          ),
        );
    },
  };
}

/**
 * The API: the routes over the stores, the perimeter, the audit trail, deadlines and metrics;
 * the SAR service's door's app over the same trail and subject access wiring, with
 * `SAR_PORT`; and the records of answers already given, waiting to be stored (settled at
 * shutdown).
 */
export async function httpAppOf(parts: ServiceParts): Promise<{
  readonly app: OpenAPIHono<AppEnv>;
  readonly sar: OpenAPIHono<AppEnv> | undefined;
  readonly late: LateAppends;
}> {
  const { config, logger, metrics, tracing, stores, credentialsIssuer, certificateIssuer, checkpointing } =
    parts;
  const auditWriter = tracedStore(tracing, stores.audit.value, config.AUDIT_STORE);
  const refusing = refusingWhileBehind(parts);
  const audit = checkpointing ? countedFor(auditWriter, checkpointing) : auditWriter;
  const late = new LateAppends({
    audit,
    logger: httpLoggerOf(logger),
    lost: () => metrics.auditAppendFailed('lost'),
  });
  // Held by another service past the deadline: 504, as its own timeout would say.
  const upstream = new Set<Engine>(
    config.CASE_STORE.kind === upstreamStores.name ? ['credentials', 'caseStore'] : ['credentials'],
  );
  const subjectAccess = await subjectAccessOf({
    log: stores.audit.value,
    caseCopies:
      config.CASE_STORE.kind === upstreamStores.name
        ? undefined
        : tracedStore(tracing, stores.cases.value, config.CASE_STORE),
    signer: parts.auditSigner,
    checkpointing: parts.checkpointing,
    archiveDir: config.AUDIT_ARCHIVE_DIR,
    previousKeys: readPreviousKeys(config),
  });
  const app = createHttpApp({
    repository: tracedStore(tracing, stores.cases.value, config.CASE_STORE),
    ...(tracing ? { tracer: tracing.tracer } : {}),
    crnFormat: config.CRN_PATTERN,
    logger: httpLoggerOf(logger),
    docs: loadDocsAssets(),
    publicUrl: config.PUBLIC_URL,
    audit,
    lateAppends: late,
    observe: metrics.observe,
    deadlines: { requestMs: config.REQUEST_DEADLINE_MS, maxInFlight: config.MAX_IN_FLIGHT, upstream },
    certificates: {
      issuer: certificateIssuer,
      requests: await certificateRequestsFor(certificateIssuer),
      directory: stores.access.value,
      days: config.CLIENT_CERT_DAYS,
      renewWithinDays: config.CLIENT_CERT_RENEW_WITHIN_DAYS,
      now: () => new Date(),
      observeRenewal: metrics.certificateRenewal,
    },
    deadlineExceeded: metrics.deadlineExceeded,
    overloaded: metrics.overloaded,
    auditFailed: metrics.auditAppendFailed,
    inFlight: metrics.inFlight,
    queueTokens: {
      issuer: tracing
        ? tracing.traced(credentialsIssuer, 'credentials', { 'rpc.system': config.CREDENTIALS_ISSUER })
        : credentialsIssuer,
      defaultRoleArn: config.STS_ROLE_ARN ?? null,
      durationSeconds: config.STS_DURATION_SECONDS,
    },
    perimeter: await perimeterOf(parts),
    subjectAccess,
    refusing,
  });
  const sar =
    parts.sarVerifier === undefined
      ? undefined
      : sarAppOf({
          config,
          verifier: parts.sarVerifier,
          metrics,
          tracing,
          logger: httpLoggerOf(logger),
          limiter: tracedStore(tracing, stores.rateLimit.value, config.RATE_LIMIT_STORE),
          audit,
          late,
          subjectAccess,
          upstream,
          refusing,
        });
  return { app, sar, late };
}

/**
 * Why every request is refused, once a quorum of the witnesses showed the audit store's trail
 * short (witness-standing.ts): nothing more is recorded on it, until an operator continues it.
 */
function refusingWhileBehind({ witnessing }: Pick<ServiceParts, 'witnessing'>): () => string | undefined {
  return () =>
    witnessing?.witnessing.behind === undefined
      ? undefined
      : 'the audit trail is shorter than what its witnesses hold, so nothing can be recorded; the operator has been told';
}

/** The management listener: readiness over every store (503 once shutdown begins) and metrics. */
export function managementOf({
  config,
  metrics,
  stores,
  witnessing,
}: Pick<ServiceParts, 'config' | 'metrics' | 'stores' | 'witnessing'>): {
  management: Hono;
  beginShutdown: () => void;
} {
  let shuttingDown = false;
  const management = createManagementApp({
    info: serviceInfoOf(config),
    metrics,
    shuttingDown: () => shuttingDown,
    checks: [
      { name: 'caseStore', check: () => stores.cases.ping() },
      { name: 'accessStore', check: () => stores.access.ping() },
      { name: 'auditStore', check: () => stores.audit.ping() },
      // With witnesses: the trail a quorum of them showed short is not to be served (witness-standing.ts).
      ...(witnessing === undefined
        ? []
        : [
            {
              name: 'auditTrail',
              check: async () => {
                if (witnessing.witnessing.behind !== undefined) throw new Error('behind its witnesses');
              },
            },
          ]),
      { name: 'rateLimitStore', check: () => stores.rateLimit.ping() },
    ],
  });
  return {
    management,
    beginShutdown: () => {
      shuttingDown = true;
    },
  };
}
