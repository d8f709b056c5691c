import type { Clock } from '../../ports/clock.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';
import { RateLimitedError } from '../errors.js';
import type { Quota, RateDecision } from './quota.js';

/**
 * Step 5: the rate limit, keyed on the API key, with the client's own quota or the
 * service default. Returns the decision (for the RateLimit headers) or throws
 * {@link RateLimitedError} carrying it.
 */
export async function applyRateLimit(
  { limiter, clock }: { limiter: RateLimiter; clock: Clock },
  apiKeyId: string,
  quota: Quota,
): Promise<RateDecision> {
  const decision = await limiter.consume(apiKeyId, quota, clock.now());
  if (!decision.allowed) throw new RateLimitedError(decision);
  return decision;
}
