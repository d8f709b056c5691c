import type { Context, MiddlewareHandler } from 'hono';
import {
  admitClient,
  type BearerMode,
  checkBearer,
  checkOnBehalfOf,
  effectivePermissions,
  requirePermission,
} from '../../domain/access/admit.js';
import type { Caller, ClientCertificate } from '../../domain/access/model.js';
import type { Permission } from '../../domain/access/permissions.js';
import { parseQuota, type Quota, type RateDecision } from '../../domain/access/quota.js';
import { applyRateLimit } from '../../domain/access/rate-limit.js';
import { DEFAULT_RENEW_WITHIN_DAYS, inRenewalWindow } from '../../domain/certificates/renew.js';
import { AccessDeniedError, RateLimitedError, UnauthenticatedError } from '../../domain/errors.js';
import type { AccessDirectory } from '../../ports/access-directory.js';
import type { Clock } from '../../ports/clock.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';
import type { SecretHasher } from '../../ports/secret-hasher.js';
import type { TokenVerifier } from '../../ports/token-verifier.js';
import type { AppEnv } from './env.js';
import type { IdentityReader } from './identity.js';
import { setHeader } from './respond.js';

export interface PerimeterOptions {
  readonly identify: IdentityReader;
  /** Step 5: requests per API key; a client's own `rateLimit` overrides the default quota. */
  readonly rateLimit: { readonly limiter: RateLimiter; readonly defaultQuota: Quota };
  readonly directory: AccessDirectory;
  readonly hasher: SecretHasher;
  readonly clock: Clock;
  readonly verifier: TokenVerifier;
  readonly bearerMode: BearerMode;
  /** A known client was admitted with a certificate whose end is known (its expiry metric, `clients list`). */
  readonly presented?: (client: string, certificate: ClientCertificate) => void;
  /**
   * `CLIENT_CERT_RENEW_WITHIN_DAYS`: a presented certificate this close to its end gets
   * `Client-Certificate-Expires` on every response (decisions §12).
   */
  readonly renewWithinDays?: number;
}

/** Tests of the core alone say so explicitly; there is no silent "no perimeter" default. */
export interface NoPerimeter {
  readonly disabled: true;
}

/** The RateLimit fields of draft-ietf-httpapi-ratelimit-headers: one policy, named for what it counts. */
function setRateLimitHeaders(c: Context<AppEnv>, decision: Omit<RateDecision, 'allowed'>): void {
  const seconds = Math.max(1, Math.round(decision.windowMs / 1000));
  setHeader(c, 'ratelimit-policy', `"per-api-key";q=${decision.limit};w=${seconds}`);
  setHeader(
    c,
    'ratelimit',
    `"per-api-key";r=${decision.remaining};t=${Math.max(0, Math.ceil(decision.resetMs / 1000))}`,
  );
}

/**
 * Steps 2–5 of the pipeline, for every request: who is calling (certificate CN), with a live
 * API key of theirs, as a known, active client with an unrevoked certificate, within the
 * key's rate limit. From here on every response carries the RateLimit headers.
 */
export function admitRequests(options: PerimeterOptions): MiddlewareHandler<AppEnv> {
  const quotas = new Map<string, Quota>();
  const quotaOf = (raw: string | null): Quota => {
    if (raw === null) return options.rateLimit.defaultQuota;
    let quota = quotas.get(raw);
    if (quota === undefined) {
      // A malformed stored limit falls back to the default rather than letting the client through unlimited.
      try {
        quota = parseQuota(raw);
      } catch {
        quota = options.rateLimit.defaultQuota;
      }
      quotas.set(raw, quota);
    }
    return quota;
  };
  const renewWithinDays = options.renewWithinDays ?? DEFAULT_RENEW_WITHIN_DAYS;
  return async (c, next) => {
    const certificate = options.identify(c.req.raw, c.env);
    if (certificate === undefined) throw new AccessDeniedError('unknown-client');
    c.set('certificate', certificate);
    const deadline = c.get('deadline');
    deadline.engine = 'accessStore';
    const { client, key } = await admitClient(options, certificate, c.req.header('x-api-key'));
    c.set('admitted', { client, certificate, apiKeyId: key.id });
    options.presented?.(client.id, certificate);
    // Inside its renewal window, every answer says when the certificate ends (IMF-fixdate).
    const { notAfter } = certificate;
    if (notAfter !== null && inRenewalWindow(notAfter, options.clock.now(), renewWithinDays)) {
      setHeader(c, 'client-certificate-expires', notAfter.toUTCString());
    }
    let decision: RateDecision;
    deadline.engine = 'rateLimitStore';
    try {
      decision = await applyRateLimit(
        { limiter: options.rateLimit.limiter, clock: options.clock },
        key.id,
        quotaOf(client.rateLimit),
      );
    } catch (error) {
      if (error instanceof RateLimitedError) setRateLimitHeaders(c, error.decision);
      throw error;
    }
    setRateLimitHeaders(c, decision);
    await next();
  };
}

/** `Authorization: Bearer <token>`; `undefined` when absent. A header of another form is a 401. */
function bearerTokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(header);
  if (!match?.[1]) throw new UnauthenticatedError('bearer', 'the Authorization header is not a bearer token');
  return match[1];
}

/**
 * Steps 6–8 for one operation: the bearer token (when the operation carries that security
 * requirement), the on-behalf-of identity, and the permission. Runs before input validation
 * (step 9), so a caller without the permission learns nothing about the input rules.
 */
export function guardOperation(
  options: PerimeterOptions,
  permission: Permission,
  { bearer }: { bearer: boolean },
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('operation', permission);
    const admitted = c.get('admitted');
    if (admitted === undefined) throw new AccessDeniedError('unknown-client');
    const deadline = c.get('deadline');
    // A key set read from a URL is fetched (and refreshed) on the way.
    deadline.engine = 'jwks';
    if (bearer) {
      await checkBearer(
        options,
        options.bearerMode,
        admitted.certificate,
        bearerTokenOf(c.req.header('authorization')),
      );
    }
    const onBehalfOf = await checkOnBehalfOf(
      options,
      admitted.client,
      admitted.certificate,
      c.req.header('x-on-behalf-of'),
    );
    // Data returned to an on-behalf-of request is for that user alone. Set before the
    // handler runs (see respond.ts).
    if (onBehalfOf !== null) setHeader(c, 'cache-control', 'no-store, private');
    deadline.engine = 'accessStore';
    const caller: Caller = {
      ...admitted,
      onBehalfOf,
      permissions: await effectivePermissions(options, admitted.client, onBehalfOf),
    };
    c.set('caller', caller);
    requirePermission(caller, permission);
    await next();
  };
}
