import type { Context, MiddlewareHandler, Next } from 'hono';
import {
  type Admission,
  admitClient,
  admitClientHeld,
  type BearerMode,
  basePermissions,
  checkBearer,
  checkBearerHeld,
  checkHeldBearer,
  checkOnBehalfOf,
  effectivePermissions,
  requirePermission,
  withoutOnBehalfOf,
} from '../../domain/access/admit.js';
import type { Caller, ClientCertificate } from '../../domain/access/model.js';
import type { Permission } from '../../domain/access/permissions.js';
import { parseQuota, type Quota, type RateDecision } from '../../domain/access/quota.js';
import { applyRateLimit, applyRateLimitNow } from '../../domain/access/rate-limit.js';
import { DEFAULT_RENEW_WITHIN_DAYS, inRenewalWindow } from '../../domain/certificates/renew.js';
import { AccessDeniedError, RateLimitedError, UnauthenticatedError } from '../../domain/errors.js';
import type { AccessDirectory } from '../../ports/access-directory.js';
import type { Clock } from '../../ports/clock.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';
import type { SecretHasher } from '../../ports/secret-hasher.js';
import type { TokenVerifier } from '../../ports/token-verifier.js';
import type { Admitted, AppEnv } from './env.js';
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

/**
 * The RateLimit fields of draft-ietf-httpapi-ratelimit-headers: one policy, named for what it
 * counts (`per-api-key` here; `per-client` at the SAR service's door).
 */
export function setRateLimitHeaders(
  c: Context<AppEnv>,
  decision: Omit<RateDecision, 'allowed'>,
  policy = 'per-api-key',
): void {
  const seconds = Math.max(1, Math.round(decision.windowMs / 1000));
  setHeader(c, 'ratelimit-policy', `"${policy}";q=${decision.limit};w=${seconds}`);
  setHeader(
    c,
    'ratelimit',
    `"${policy}";r=${decision.remaining};t=${Math.max(0, Math.ceil(decision.resetMs / 1000))}`,
  );
}

/**
 * Steps 2–5 of the pipeline, for every request: who is calling (certificate CN), with a live
 * API key of theirs, as a known, active client with an unrevoked certificate, within the
 * key's rate limit. From here on every response carries the RateLimit headers.
 *
 * What the directory and the limiter hold in this process is decided at once, without a
 * promise turn (`admitClientHeld`, `applyRateLimitNow`: the same rules and refusals); only
 * what must be read from a store is waited for.
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
  const limit = { limiter: options.rateLimit.limiter, clock: options.clock };

  /** Step 5 and on, once the client is admitted. */
  const admitted = (
    c: Context<AppEnv>,
    next: Next,
    certificate: ClientCertificate,
    { client, key }: Admission,
  ): Promise<void> => {
    c.set('admitted', { client, certificate, apiKeyId: key.id });
    options.presented?.(client.id, certificate);
    // Inside its renewal window, every answer says when the certificate ends (IMF-fixdate).
    const { notAfter } = certificate;
    if (notAfter !== null && inRenewalWindow(notAfter, options.clock.now(), renewWithinDays)) {
      setHeader(c, 'client-certificate-expires', notAfter.toUTCString());
    }
    c.get('deadline').engine = 'rateLimitStore';
    const quota = quotaOf(client.rateLimit);
    const refused = (error: unknown): never => {
      if (error instanceof RateLimitedError) setRateLimitHeaders(c, error.decision);
      throw error;
    };
    let decision: RateDecision | undefined;
    try {
      decision = applyRateLimitNow(limit, key.id, quota);
    } catch (error) {
      refused(error);
    }
    if (decision === undefined) {
      return applyRateLimit(limit, key.id, quota).then((counted) => {
        setRateLimitHeaders(c, counted);
        return next();
      }, refused);
    }
    setRateLimitHeaders(c, decision);
    return next();
  };

  return (c, next) => {
    const certificate = options.identify(c.req.raw, c.env);
    if (certificate === undefined) throw new AccessDeniedError('unknown-client');
    c.set('certificate', certificate);
    // Identified: from here on the request is recorded, refusals included.
    c.set('auditedAs', { clientId: certificate.commonName, certificateSerial: certificate.serialNumber });
    c.get('deadline').engine = 'accessStore';
    const presentedKey = c.req.header('x-api-key');
    const held = admitClientHeld(options, certificate, presentedKey);
    if (held !== undefined) return admitted(c, next, certificate, held);
    return admitClient(options, certificate, presentedKey).then((admission) =>
      admitted(c, next, certificate, admission),
    );
  };
}

/**
 * `Authorization: Bearer <token>` (RFC 6750 §2.1: the scheme in any case, a token68); `undefined`
 * when absent. A header of another form is a 401. Exported for its property test.
 */
export function bearerTokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(header);
  if (!match?.[1]) throw new UnauthenticatedError('bearer', 'the Authorization header is not a bearer token');
  return match[1];
}

/**
 * Steps 6–8 for one operation: the bearer token (when the operation carries that security
 * requirement), the on-behalf-of identity, and the permission. Runs before input validation
 * (step 9), so a caller without the permission learns nothing about the input rules.
 *
 * A bearer token the verifier holds as verified, and no on-behalf-of token, are decided at
 * once (`checkBearerHeld`, `withoutOnBehalfOf`: the same rules and refusals); anything else
 * is waited for.
 */
export function guardOperation(
  options: PerimeterOptions,
  permission: Permission,
  { bearer }: { bearer: boolean },
): MiddlewareHandler<AppEnv> {
  /** Step 8, once who is calling, and for whom, is known. */
  const permitted = (
    c: Context<AppEnv>,
    next: Next,
    admitted: Admitted,
    onBehalfOf: Caller['onBehalfOf'],
    permissions: Caller['permissions'],
  ): Promise<void> => {
    const caller: Caller = {
      client: admitted.client,
      certificate: admitted.certificate,
      apiKeyId: admitted.apiKeyId,
      onBehalfOf,
      permissions,
    };
    c.set('caller', caller);
    requirePermission(caller, permission);
    return next();
  };

  /** Steps 6–8 waiting on the key set, the on-behalf-of token's keys or the user's grants. */
  const waiting = async (c: Context<AppEnv>, next: Next, admitted: Admitted, token: string | undefined) => {
    const deadline = c.get('deadline');
    if (bearer) await checkBearer(options, options.bearerMode, admitted.certificate, token);
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
    const permissions = await effectivePermissions(options, admitted.client, onBehalfOf);
    return permitted(c, next, admitted, onBehalfOf, permissions);
  };

  return (c, next) => {
    c.set('operation', permission);
    const admitted = c.get('admitted');
    if (admitted === undefined) throw new AccessDeniedError('unknown-client');
    // A key set read from a URL is fetched (and refreshed) on the way.
    c.get('deadline').engine = 'jwks';
    let token: string | undefined;
    let decided = !bearer;
    if (bearer) {
      const header = c.req.header('authorization');
      // A token the verifier holds, sent as `Bearer <token>`, is of the token's form (it was
      // verified), so the header's form need not be read again: as `bearerTokenOf` would.
      const sent = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
      const held = sent === undefined ? undefined : options.verifier.heldBearer?.(sent);
      if (held !== undefined) {
        checkHeldBearer(options.bearerMode, admitted.certificate, held);
        token = sent;
        decided = true;
      } else {
        token = bearerTokenOf(header);
        decided = checkBearerHeld(options, options.bearerMode, admitted.certificate, token);
      }
    }
    if (!decided || c.req.header('x-on-behalf-of') !== undefined) return waiting(c, next, admitted, token);
    c.get('deadline').engine = 'accessStore';
    return permitted(c, next, admitted, withoutOnBehalfOf(admitted.client), basePermissions(admitted.client));
  };
}
