import type { Quota, RateDecision } from '../domain/access/quota.js';

/**
 * The rate limiter port: counts requests per API key in fixed windows (adapters: memory;
 * Redis to share counts between instances). Contract, checked by
 * `test/contract/rate-limiter.contract.ts`:
 *
 * - within one window, the first `limit` requests are allowed and the rest refused;
 * - windows are aligned to multiples of the window length since the epoch, so every instance
 *   agrees on when a window starts; `resetMs` is the time left in the current one;
 * - `remaining` never goes below zero; refused requests still count;
 * - keys are independent, and one key under two quotas is counted per quota.
 */
export interface RateLimiter {
  /** Counts one request against `key` under `quota` and says whether it may proceed. */
  consume(key: string, quota: Quota, now: Date): Promise<RateDecision>;
  /**
   * `consume` answered at once, for a limiter that counts in this process: the same count and
   * decision, with no promise (the request path then takes no turn for it). Absent where the
   * count lives elsewhere.
   */
  consumeNow?(key: string, quota: Quota, now: Date): RateDecision;
}
