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
  return allowed(await limiter.consume(apiKeyId, quota, clock.now()));
}

/**
 * {@link applyRateLimit} decided at once by a limiter that counts in this process (its
 * `consumeNow`): the same decision, the same refusal. `undefined` for a limiter that has
 * none (then `applyRateLimit`); nothing is counted then.
 */
export function applyRateLimitNow(
  { limiter, clock }: { limiter: Pick<RateLimiter, 'consumeNow'>; clock: Clock },
  apiKeyId: string,
  quota: Quota,
): RateDecision | undefined {
  const decision = limiter.consumeNow?.(apiKeyId, quota, clock.now());
  return decision === undefined ? undefined : allowed(decision);
}

function allowed(decision: RateDecision): RateDecision {
  if (!decision.allowed) throw new RateLimitedError(decision);
  return decision;
}
