import type { Context, MiddlewareHandler, Next } from 'hono';
import type { Permission } from '../../domain/access/permissions.js';
import type { Quota, RateDecision } from '../../domain/access/quota.js';
import { applyRateLimit, applyRateLimitNow } from '../../domain/access/rate-limit.js';
import { requireSarRole, type SarTokenClaims } from '../../domain/access/sar-caller.js';
import { RateLimitedError, UnauthenticatedError } from '../../domain/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';
import type { SarTokenVerifier } from '../../ports/sar-token-verifier.js';
import type { AppEnv } from './env.js';
import { bearerTokenOf, setRateLimitHeaders } from './perimeter.js';

/**
 * The SAR service's door's guard (decisions §23), in place of the main listener's perimeter:
 * the caller presents no client certificate and no API key, only the organisation's
 * client-credentials token. In order, each failing closed:
 *
 * 1. `Authorization: Bearer <token>`, verified (issuer, signature, expiry): none, or one that
 *    does not verify, is 401 and leaves no audit record (the caller is not identified, as a
 *    failed handshake on the main listener); a key set that cannot be had is 503;
 * 2. from here the caller is its token's client, and the request is recorded under it;
 * 3. the rate limit, per client (the service's default quota, `RATE_LIMIT_DEFAULT`), with the
 *    RateLimit headers: 429 when over;
 * 4. the role (`SAR_AUTH_ROLE`) in the token's `authorities`: 403 without it.
 *
 * What the verifier and the limiter hold in this process is decided at once, as on the main
 * listener; only what must be fetched or counted elsewhere is waited for.
 */

export interface SarDoorOptions {
  readonly verifier: SarTokenVerifier;
  /** The role the token must carry in `authorities`. */
  readonly role: string;
  readonly rateLimit: { readonly limiter: RateLimiter; readonly defaultQuota: Quota };
  readonly clock: Clock;
}

/** The RateLimit policy's name at the door: it counts a token's client. */
const POLICY = 'per-client';

/** The rate limiter's key of a token's client: apart from the main listener's API key ids. */
const limitKey = (clientId: string) => `sar:${clientId}`;

export function guardSarOperation(options: SarDoorOptions, operation: Permission): MiddlewareHandler<AppEnv> {
  const limit = { limiter: options.rateLimit.limiter, clock: options.clock };
  const quota = options.rateLimit.defaultQuota;

  /** Steps 3 and 4, once the token is verified. */
  const admitted = (c: Context<AppEnv>, next: Next, claims: SarTokenClaims): Promise<void> => {
    c.set('auditedAs', { clientId: claims.clientId, certificateSerial: '' });
    c.get('deadline').engine = 'rateLimitStore';
    const counted = (decision: RateDecision): Promise<void> => {
      setRateLimitHeaders(c, decision, POLICY);
      requireSarRole(claims, options.role);
      return next();
    };
    const refused = (error: unknown): never => {
      if (error instanceof RateLimitedError) setRateLimitHeaders(c, error.decision, POLICY);
      throw error;
    };
    let decision: RateDecision | undefined;
    try {
      decision = applyRateLimitNow(limit, limitKey(claims.clientId), quota);
    } catch (error) {
      refused(error);
    }
    if (decision === undefined)
      return applyRateLimit(limit, limitKey(claims.clientId), quota).then(counted, refused);
    return counted(decision);
  };

  return (c, next) => {
    c.set('operation', operation);
    // A key set read from a URL is fetched (and refreshed) on the way.
    c.get('deadline').engine = 'jwks';
    const token = bearerTokenOf(c.req.header('authorization'));
    if (token === undefined) throw new UnauthenticatedError('bearer', 'a bearer token is required', true);
    const held = options.verifier.held?.(token);
    if (held !== undefined) return admitted(c, next, held);
    return options.verifier.verify(token).then((claims) => admitted(c, next, claims));
  };
}
