import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Hono } from 'hono';
import { sha256Hasher } from '../../adapters/crypto/api-keys.js';
import { CheckpointKeyError, checkpointSigner } from '../../adapters/crypto/checkpoint-keys.js';
import { createHttpApp } from '../../adapters/http/app.js';
import type { Engine } from '../../adapters/http/deadline.js';
import type { DocsAssets } from '../../adapters/http/docs.js';
import type { AppEnv, HttpLogger } from '../../adapters/http/env.js';
import { NO_RENEWAL } from '../../adapters/http/est.handlers.js';
import { type IdentityReader, trustedGatewayIdentity } from '../../adapters/http/identity.js';
import { createManagementApp } from '../../adapters/http/management.js';
import type { PerimeterOptions } from '../../adapters/http/perimeter.js';
import { JoseTokenVerifier } from '../../adapters/jose/token-verifier.js';
import { LocalCredentialsIssuer } from '../../adapters/local-credentials/credentials-issuer.js';
import type { Tracing } from '../../adapters/opentelemetry/tracing.js';
import { accessLogOf, createLogger, type Logger } from '../../adapters/pino/logger.js';
import { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import {
  bundleHolds,
  CertificateFileError,
  certificateAndKey,
  certificateBundle,
  checkCrl,
} from '../../adapters/shared/certificates.js';
import { readSecretFile } from '../../adapters/shared/secret-files.js';
import { peerCertificateOf } from '../../adapters/tls-listener/peer-certificate.js';
import type { RunningServer, TlsFiles } from '../../adapters/tls-listener/server.js';
import { upstreamStores } from '../../adapters/upstream-http/store-kind.js';
import type { AuditLog, AuditWriter } from '../../ports/audit-log.js';
import type { CertificateIssuer } from '../../ports/certificate-issuer.js';
import type { CertificateRequests } from '../../ports/certificate-requests.js';
import type { CheckpointSigner } from '../../ports/checkpoint-keys.js';
import { systemClock } from '../../ports/clock.js';
import type { CredentialsIssuer } from '../../ports/credentials-issuer.js';
import type { Environment, Opened, ReloadableTls, StoreWiring } from '../../ports/stores.js';
import type { OutgoingTracing } from '../../ports/tracing.js';
import { AuditCheckpointing } from '../audit-checkpointing.js';
import { CertificateExpiry } from '../certificate-expiry.js';
import type { StoreRef } from '../stores.js';
import type { NamedCertificate, TlsWatch } from '../tls-reload.js';
import { certificateWatch } from './certificate-watch.js';
import { type Config, ConfigError, type IssuerConfig, loadConfig } from './config.js';
import { STORE_REGISTRY, storeWiring } from './store-kinds.js';

/**
 * The composition root of `serve`: configuration in, adapters built, the app wired. Only
 * the files of this folder choose adapters (the dependency rules enforce it): this one for
 * the service, `store-kinds.ts` for the stores, `runtime.ts` for the listener, and
 * `operator.ts` for what the operator commands use.
 */

/** `serve` logs through pino (JSON lines on stdout). */
export { createLogger, type Logger };

/** The service's configuration, with the store kinds this service knows. */
export const loadServiceConfig = (env: Environment): Config => loadConfig(env, STORE_REGISTRY);

/** Reads the Swagger UI assets from the swagger-ui-dist package, once. */
export function loadDocsAssets(): DocsAssets {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve('swagger-ui-dist/package.json'));
  return {
    css: readFileSync(join(root, 'swagger-ui.css'), 'utf8'),
    bundleJs: readFileSync(join(root, 'swagger-ui-bundle.js'), 'utf8'),
  };
}

function readPem(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([
      `${variable}: ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    ]);
  }
}

/** A private key file, read as {@link readPem} reads a PEM file, and refused when others can read it. */
const readKey = (variable: string, path: string): string =>
  readSecretFile(variable, path, (message) => new ConfigError([message]));

/** The client CA bundle (`TLS_CLIENT_CA`), read as `serve` reads it. */
export const readClientCa = (config: Pick<Config, 'TLS_CLIENT_CA'>): string =>
  readPem('TLS_CLIENT_CA', config.TLS_CLIENT_CA);

function readTlsFiles(config: Config): TlsFiles {
  return {
    cert: readPem('TLS_CERT', config.TLS_CERT),
    key: readKey('TLS_KEY', config.TLS_KEY),
    clientCa: readClientCa(config),
    ...(config.TLS_CRL ? { crl: readPem('TLS_CRL', config.TLS_CRL) } : {}),
  };
}

/**
 * The listener's TLS files, read and checked (the key is the certificate's and not readable
 * by others, the certificate valid now, every CA of the bundle parses, the CRL file holds a
 * CRL), with the certificates they hold for the expiry metrics. Throws a ConfigError naming
 * the variable at fault.
 */
export function readListenerTls(config: Config): { files: TlsFiles; certificates: NamedCertificate[] } {
  const files = readTlsFiles(config);
  try {
    const server = certificateAndKey({ cert: 'TLS_CERT', key: 'TLS_KEY' }, files, new Date());
    const cas = certificateBundle('TLS_CLIENT_CA', files.clientCa);
    if (files.crl !== undefined) checkCrl('TLS_CRL', files.crl);
    return {
      files,
      certificates: [
        { certificate: 'server', ...server },
        ...cas.map((ca) => ({ certificate: 'client-ca', ...ca })),
      ],
    };
  } catch (error) {
    if (error instanceof CertificateFileError) throw new ConfigError([error.message]);
    throw error;
  }
}

/**
 * The signer of the audit checkpoints, when `AUDIT_SIGNING_KEY` names one: read and checked
 * (an Ed25519 private key, in a file not readable by others). Throws a ConfigError naming
 * the variable, never the key.
 */
export async function readAuditSigner(config: Config): Promise<CheckpointSigner | undefined> {
  if (config.AUDIT_SIGNING_KEY === undefined) return undefined;
  const pem = readKey('AUDIT_SIGNING_KEY', config.AUDIT_SIGNING_KEY);
  try {
    return await checkpointSigner(pem, config.AUDIT_ORIGIN);
  } catch (error) {
    if (error instanceof CheckpointKeyError)
      throw new ConfigError([`AUDIT_SIGNING_KEY: ${config.AUDIT_SIGNING_KEY}: ${error.message}`]);
    throw error;
  }
}

/**
 * Checkpoints of the audit chain, taken by this instance (decisions §9): logged, stored,
 * and made visible as metrics. Started at once; `stop` takes the last one.
 */
function startCheckpointing(
  config: Config,
  signer: CheckpointSigner,
  audit: AuditLog,
  logger: Logger,
  metrics: PrometheusMetrics,
): AuditCheckpointing {
  const seen = metrics.auditCheckpoints();
  const checkpointing = new AuditCheckpointing({
    store: audit,
    signer,
    everyRecords: config.AUDIT_CHECKPOINT_RECORDS,
    everySeconds: config.AUDIT_CHECKPOINT_SECONDS,
    now: () => new Date(),
    out: {
      signed: (checkpoint) => {
        seen.signed();
        logger.info({ checkpoint }, 'audit checkpoint');
      },
      observed: (head, newest) => seen.observed(head.seq, newest),
      failed: (reason) => {
        seen.failed();
        logger.error({ reason }, 'audit checkpoint failed; it will be tried again');
      },
      contradicted: (head, newest) =>
        logger.error(
          { headSeq: head.seq, checkpointSeq: newest.seq },
          'the audit trail ends before its newest checkpoint: records were removed; run case-read audit verify',
        ),
    },
  });
  logger.info(
    {
      keyId: signer.keyId,
      everyRecords: config.AUDIT_CHECKPOINT_RECORDS,
      everySeconds: config.AUDIT_CHECKPOINT_SECONDS,
    },
    'audit checkpoints on',
  );
  checkpointing.start();
  return checkpointing;
}

/**
 * The audit writer the requests use: each record counted for the checkpoints as it is
 * handed to the store (no promise of its own on the request path; the checkpoint reads the
 * head the store has committed, whatever the count).
 */
const countedFor = (writer: AuditWriter, checkpointing: AuditCheckpointing): AuditWriter => ({
  append: (record, deadline) => {
    checkpointing.appended();
    return writer.append(record, deadline);
  },
});

/** The files of the listener's TLS set, as configured. */
const listenerTlsPaths = (config: Config): string[] =>
  [config.TLS_CERT, config.TLS_KEY, config.TLS_CLIENT_CA, config.TLS_CRL].filter(
    (path): path is string => path !== undefined,
  );

/** What the HTTP app logs through: pino, with the access line written by its own template. */
function httpLoggerOf(logger: Logger): HttpLogger {
  const request = accessLogOf(logger);
  return {
    info: (fields, message) => logger.info(fields, message),
    error: (fields, message) => logger.error(fields, message),
    ...(request ? { request } : {}),
  };
}

export interface Service {
  readonly app: OpenAPIHono<AppEnv>;
  /** The management listener's app: health and metrics. */
  readonly management: Hono;
  readonly tls: TlsFiles;
  /**
   * Starts reloading the certificates (the listener's, the stores') when their files change
   * and on `reloadAll` (SIGHUP), and checking them for expiry.
   */
  watchCertificates(server: RunningServer): TlsWatch;
  readonly stores: {
    readonly cases: string;
    readonly access: string;
    readonly audit: string;
    readonly rateLimit: string;
    readonly credentials: string;
  };
  /** Shutdown has begun: readiness answers 503 from now on. */
  beginShutdown(): void;
  /** Writes any pending audit record, then closes every store. */
  close(): Promise<void>;
}

const tlsPeerIdentity: IdentityReader = (_request, env) => peerCertificateOf(env);

/**
 * The credentials issuer of `POST /token`: AWS STS, or the local development stand-in. The
 * AWS SDK is loaded only for STS (it is the largest thing the service could load).
 */
export async function createCredentialsIssuer(
  config: Config,
  tracing?: OutgoingTracing,
): Promise<CredentialsIssuer & { close?(): void }> {
  if (config.CREDENTIALS_ISSUER === 'local') return new LocalCredentialsIssuer();
  const { StsCredentialsIssuer } = await import('../../adapters/sts/credentials-issuer.js');
  return new StsCredentialsIssuer({
    region: config.STS_REGION,
    timeoutMs: config.STS_TIMEOUT_MS,
    ...(config.STS_ENDPOINT ? { endpoint: config.STS_ENDPOINT } : {}),
    ...(tracing ? { tracing } : {}),
  });
}

/**
 * The issuer of client certificates (decisions §12), by `CLIENT_CERT_ISSUER`: none (null),
 * a local CA (its certificate and key read and checked: the key is the CA's and not readable
 * by others, and the CA is one `TLS_CLIENT_CA` trusts, else what it issued could never be
 * presented), or AWS Private CA (its SDK loaded only then). Throws a ConfigError naming the
 * variable.
 */
export async function createCertificateIssuer(
  config: IssuerConfig,
  clientCaBundle: string,
  tracing?: OutgoingTracing,
): Promise<CertificateIssuer | null> {
  if (config.CLIENT_CERT_ISSUER === 'none') return null;
  if (config.CLIENT_CERT_ISSUER === 'acm-pca') {
    const { AcmPcaCertificateIssuer } = await import('../../adapters/acm-pca/certificate-issuer.js');
    return new AcmPcaCertificateIssuer({
      arn: config.ACM_PCA_ARN ?? '',
      region: config.ACM_PCA_REGION,
      timeoutMs: config.REQUEST_DEADLINE_MS,
      ...(config.ACM_PCA_ENDPOINT ? { endpoint: config.ACM_PCA_ENDPOINT } : {}),
      ...(tracing ? { tracing } : {}),
    });
  }
  const { LocalCertificateIssuer, LocalIssuerError } = await import('../../adapters/x509/local-issuer.js');
  const issuer = await LocalCertificateIssuer.load(
    readPem('CLIENT_CA_CERT', config.CLIENT_CA_CERT ?? ''),
    readKey('CLIENT_CA_KEY', config.CLIENT_CA_KEY ?? ''),
  ).catch((error: unknown) => {
    throw error instanceof LocalIssuerError ? new ConfigError([error.message]) : error;
  });
  let trusted: boolean;
  try {
    trusted = bundleHolds('TLS_CLIENT_CA', clientCaBundle, issuer.caDer);
  } catch (error) {
    if (error instanceof CertificateFileError) throw new ConfigError([error.message]);
    throw error;
  }
  if (!trusted) {
    throw new ConfigError([
      'CLIENT_CA_CERT: is not in TLS_CLIENT_CA, so the certificates it issues would not be accepted; add it to the bundle',
    ]);
  }
  return issuer;
}

/**
 * How CSRs are read: @peculiar/x509 and its ASN.1 modules (some MiB of memory) are loaded
 * only by a service that issues certificates. Without an issuer no CSR is ever read: both
 * EST routes answer 501 before reading one.
 */
async function certificateRequestsFor(issuer: CertificateIssuer | null): Promise<CertificateRequests> {
  if (issuer === null) return NO_RENEWAL.requests;
  return (await import('../../adapters/x509/certificate-requests.js')).x509CertificateRequests;
}

/** The service's version, for the traces' resource. */
function serviceVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('../../../package.json') as { version: string }).version;
}

/**
 * Tracing, when `OTEL_TRACES_EXPORTER=otlp` (decisions §10); undefined when off, and then
 * the OpenTelemetry SDK is not even loaded.
 */
async function startTracingIf(config: Config): Promise<Tracing | undefined> {
  if (config.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const { startTracing } = await import('../../adapters/opentelemetry/tracing.js');
  return startTracing({
    serviceName: config.OTEL_SERVICE_NAME,
    serviceVersion: serviceVersion(),
    url:
      config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`,
    protocol: config.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: config.OTEL_EXPORTER_OTLP_HEADERS,
    sampler: config.OTEL_TRACES_SAMPLER,
    samplerRatio: config.OTEL_TRACES_SAMPLER_ARG,
  });
}

/** Opens every store, or none: a store that fails to open closes the ones already open. */
async function openStores(config: Config, wiring: StoreWiring) {
  const opened: Opened<unknown>[] = [];
  const keep = async <T>(opening: Promise<Opened<T>>): Promise<Opened<T>> => {
    const store = await opening;
    opened.push(store);
    return store;
  };
  try {
    return {
      cases: await keep(STORE_REGISTRY.openCaseRepository(config.CASE_STORE, wiring)),
      access: await keep(STORE_REGISTRY.openAccessDirectory(config.ACCESS_STORE, wiring)),
      audit: await keep(STORE_REGISTRY.openAuditLog(config.AUDIT_STORE, wiring, { create: true })),
      rateLimit: await keep(STORE_REGISTRY.openRateLimiter(config.RATE_LIMIT_STORE, wiring)),
    };
  } catch (error) {
    for (const store of opened.reverse()) await store.close().catch(() => {});
    throw error;
  }
}

/** The bearer-token verifier, from `BEARER_*`; a key set that cannot be read is a ConfigError. */
function createTokenVerifier(config: Config): JoseTokenVerifier {
  try {
    return new JoseTokenVerifier({
      bearer:
        config.BEARER_MODE === 'off'
          ? null
          : {
              jwks: config.BEARER_JWKS ?? '',
              issuer: config.BEARER_ISSUER ?? '',
              audience: config.BEARER_AUDIENCE ?? '',
            },
    });
  } catch (error) {
    throw new ConfigError([`BEARER_JWKS: ${(error as Error).message}`]);
  }
}

/** What the service is built from before its HTTP app: read, checked, opened. */
interface Parts {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: PrometheusMetrics;
  readonly tracing: Tracing | undefined;
  readonly stores: Awaited<ReturnType<typeof openStores>>;
  readonly credentialsIssuer: CredentialsIssuer & { close?(): void };
  readonly certificateIssuer: CertificateIssuer | null;
  readonly verifier: JoseTokenVerifier;
  readonly expiry: CertificateExpiry;
  readonly checkpointing: AuditCheckpointing | undefined;
}

/** With tracing on, each call to `port` is a span naming the store and its kind. */
const tracedStore = <T extends object>(tracing: Tracing | undefined, port: T, ref: StoreRef): T =>
  tracing ? tracing.traced(port, ref.role, { 'db.system.name': ref.kind }) : port;

/** The security perimeter (decisions §1 steps 2–8) over the access and rate-limit stores. */
async function perimeterOf(parts: Parts): Promise<PerimeterOptions> {
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

/** The API: the routes over the stores, the perimeter, the audit trail, deadlines and metrics. */
async function httpAppOf(parts: Parts): Promise<OpenAPIHono<AppEnv>> {
  const { config, logger, metrics, tracing, stores, credentialsIssuer, certificateIssuer, checkpointing } =
    parts;
  const auditWriter = tracedStore(tracing, stores.audit.value, config.AUDIT_STORE);
  return createHttpApp({
    repository: tracedStore(tracing, stores.cases.value, config.CASE_STORE),
    ...(tracing ? { tracer: tracing.tracer } : {}),
    crnFormat: config.CRN_PATTERN,
    logger: httpLoggerOf(logger),
    docs: loadDocsAssets(),
    publicUrl: config.PUBLIC_URL,
    audit: checkpointing ? countedFor(auditWriter, checkpointing) : auditWriter,
    observe: metrics.observe,
    deadlines: {
      requestMs: config.REQUEST_DEADLINE_MS,
      maxInFlight: config.MAX_IN_FLIGHT,
      // Held by another service past the deadline: 504, as its own timeout would say.
      upstream: new Set<Engine>(
        config.CASE_STORE.kind === upstreamStores.name ? ['credentials', 'caseStore'] : ['credentials'],
      ),
    },
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
  });
}

/** The management listener: readiness over every store (503 once shutdown begins) and metrics. */
function managementOf({ metrics, stores }: Parts): { management: Hono; beginShutdown: () => void } {
  let shuttingDown = false;
  const management = createManagementApp({
    metrics,
    shuttingDown: () => shuttingDown,
    checks: [
      { name: 'caseStore', check: () => stores.cases.ping() },
      { name: 'accessStore', check: () => stores.access.ping() },
      { name: 'auditStore', check: () => stores.audit.ping() },
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

/**
 * Closes what the service opened, the audit trail first: anything pending is written (and,
 * with a signing key, a last checkpoint taken) before the rest goes; tracing last, so the
 * spans of the drain are exported too.
 */
function closerOf({ stores, checkpointing, credentialsIssuer, tracing }: Parts): () => Promise<void> {
  return async () => {
    await checkpointing?.stop();
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
  const tracing = await startTracingIf(config);
  const credentialsIssuer = await createCredentialsIssuer(config, tracing);
  const certificateIssuer = await createCertificateIssuer(config, listenerTls.files.clientCa, tracing);
  const verifier = createTokenVerifier(config);
  const metrics = new PrometheusMetrics();
  const expiry = new CertificateExpiry({
    certificates: metrics.certificates,
    client: metrics.clientCertificate,
    warn: (fields, message) => logger.warn(fields, message),
    now: () => new Date(),
  });
  const wiring = storeWiring(config.CRN_PATTERN, (level, fields, message) => logger[level](fields, message), {
    onRateLimitTransition: metrics.rateLimitStoreTransition,
    observeUpstream: metrics.upstreamCall,
    requestDeadlineMs: config.REQUEST_DEADLINE_MS,
    ...(tracing ? { tracing } : {}),
  });
  const stores = await openStores(config, wiring);
  const checkpointing = auditSigner
    ? startCheckpointing(config, auditSigner, stores.audit.value, logger, metrics)
    : undefined;
  const parts: Parts = {
    config,
    logger,
    metrics,
    tracing,
    stores,
    credentialsIssuer,
    certificateIssuer,
    verifier,
    expiry,
    checkpointing,
  };
  const { management, beginShutdown } = managementOf(parts);
  return {
    app: await httpAppOf(parts),
    management,
    tls: listenerTls.files,
    watchCertificates: certificateWatch(
      {
        paths: listenerTlsPaths(config),
        certificates: listenerTls.certificates,
        read: () => readListenerTls(config),
      },
      // The stores' own client certificates and CAs (the upstream's, Redis's).
      [stores.cases.tls, stores.rateLimit.tls].filter((tls): tls is ReloadableTls => tls !== undefined),
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
