import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Hono } from 'hono';
import { sha256Hasher } from '../../adapters/crypto/api-keys.js';
import { createHttpApp } from '../../adapters/http/app.js';
import type { DocsAssets } from '../../adapters/http/docs.js';
import type { AppEnv, HttpLogger } from '../../adapters/http/env.js';
import { type IdentityReader, trustedGatewayIdentity } from '../../adapters/http/identity.js';
import { createManagementApp } from '../../adapters/http/management.js';
import { JoseTokenVerifier } from '../../adapters/jose/token-verifier.js';
import { LocalCredentialsIssuer } from '../../adapters/local-credentials/credentials-issuer.js';
import { accessLogOf, createLogger, type Logger } from '../../adapters/pino/logger.js';
import { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import { peerCertificateOf } from '../../adapters/tls-listener/peer-certificate.js';
import type { TlsFiles } from '../../adapters/tls-listener/server.js';
import { systemClock } from '../../ports/clock.js';
import type { CredentialsIssuer } from '../../ports/credentials-issuer.js';
import type { Environment, Opened, StoreWiring } from '../../ports/stores.js';
import { type Config, ConfigError, loadConfig } from '../config.js';
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

export function readTlsFiles(config: Config): TlsFiles {
  return {
    cert: readPem('TLS_CERT', config.TLS_CERT),
    key: readPem('TLS_KEY', config.TLS_KEY),
    clientCa: readPem('TLS_CLIENT_CA', config.TLS_CLIENT_CA),
    ...(config.TLS_CRL ? { crl: readPem('TLS_CRL', config.TLS_CRL) } : {}),
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

export interface Service {
  readonly app: OpenAPIHono<AppEnv>;
  /** The management listener's app: health and metrics. */
  readonly management: Hono;
  readonly tls: TlsFiles;
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
): Promise<CredentialsIssuer & { close?(): void }> {
  if (config.CREDENTIALS_ISSUER === 'local') return new LocalCredentialsIssuer();
  const { StsCredentialsIssuer } = await import('../../adapters/sts/credentials-issuer.js');
  return new StsCredentialsIssuer({
    region: config.STS_REGION,
    timeoutMs: config.STS_TIMEOUT_MS,
    ...(config.STS_ENDPOINT ? { endpoint: config.STS_ENDPOINT } : {}),
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

export async function buildService(config: Config, logger: Logger): Promise<Service> {
  const tls = readTlsFiles(config);
  const credentialsIssuer = await createCredentialsIssuer(config);
  const verifier = (() => {
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
  })();
  const metrics = new PrometheusMetrics();
  const wiring = storeWiring(config.CRN_PATTERN, (level, fields, message) => logger[level](fields, message), {
    onRateLimitTransition: metrics.rateLimitStoreTransition,
    observeUpstream: metrics.upstreamCall,
  });
  const { cases, access, audit, rateLimit } = await openStores(config, wiring);
  const app = createHttpApp({
    repository: cases.value,
    crnFormat: config.CRN_PATTERN,
    logger: httpLoggerOf(logger),
    docs: loadDocsAssets(),
    publicUrl: config.PUBLIC_URL,
    audit: audit.value,
    observe: metrics.observe,
    queueTokens: {
      issuer: credentialsIssuer,
      defaultRoleArn: config.STS_ROLE_ARN ?? null,
      durationSeconds: config.STS_DURATION_SECONDS,
    },
    perimeter: {
      rateLimit: { limiter: rateLimit.value, defaultQuota: config.RATE_LIMIT_DEFAULT },
      identify:
        config.IDENTITY_MODE === 'trusted-header'
          ? trustedGatewayIdentity(
              new Set(config.TRUSTED_GATEWAYS),
              tlsPeerIdentity,
              // Loaded only behind a gateway: the X.509 reader of a forwarded certificate.
              (await import('../../adapters/x509/forwarded-certificate.js')).cachedForwardedCertificates(),
            )
          : tlsPeerIdentity,
      directory: access.value,
      hasher: sha256Hasher,
      clock: systemClock,
      verifier,
      bearerMode: config.BEARER_MODE,
    },
  });
  let shuttingDown = false;
  const management = createManagementApp({
    metrics,
    shuttingDown: () => shuttingDown,
    checks: [
      { name: 'caseStore', check: () => cases.ping() },
      { name: 'accessStore', check: () => access.ping() },
      { name: 'auditStore', check: () => audit.ping() },
      { name: 'rateLimitStore', check: () => rateLimit.ping() },
    ],
  });
  return {
    app,
    management,
    tls,
    stores: {
      cases: cases.description,
      access: access.description,
      audit: audit.description,
      rateLimit: rateLimit.description,
      credentials: config.CREDENTIALS_ISSUER,
    },
    beginShutdown: () => {
      shuttingDown = true;
    },
    close: async () => {
      // The audit trail first: anything pending is written before the rest goes.
      await audit.close();
      await Promise.allSettled([cases.close(), access.close(), rateLimit.close()]);
      credentialsIssuer.close?.();
    },
  };
}
