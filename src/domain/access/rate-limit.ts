import { RateLimitedError } from '../errors.js';
import type { Clock } from '../needs.js';

/** A quota: at most `limit` requests per window of `windowMs`, e.g. `100/1s`. */
export interface Quota {
  readonly limit: number;
  readonly windowMs: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms`, `30s`, `15m`, `12h`, `90d` into milliseconds; throws naming the expected form. */
export function parseDuration(raw: string, what = 'duration'): number {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw.trim());
  if (!match) throw new Error(`${what} must look like 30s, 15m, 12h or 90d`);
  const ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  if (ms <= 0) throw new Error(`${what} must be more than zero`);
  return ms;
}

/** Parses `N/DURATION` (`100/1s`, `6000/1m`, `10/500ms`); throws naming the expected form. */
export function parseQuota(raw: string): Quota {
  const match = /^(\d{1,9})\/(\S+)$/.exec(raw.trim());
  const limit = Number(match?.[1]);
  let windowMs = 0;
  try {
    windowMs = match?.[2] === undefined ? 0 : parseDuration(match[2]);
  } catch {
    // reported below, in the quota's own terms
  }
  if (!match || limit < 1 || windowMs < 1) {
    throw new Error('rate limit must look like N/DURATION, e.g. 100/1s or 6000/1m');
  }
  return { limit, windowMs };
}

/** What a rate limiter says of one request. */
export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  /** Requests left in this window after this one. */
  readonly remaining: number;
  /** Milliseconds until the window resets. */
  readonly resetMs: number;
  readonly windowMs: number;
}

/** The fixed window `at` falls in: windows are aligned to multiples of their length since the epoch. */
export const windowIndex = (quota: Quota, at: number): number => Math.floor(at / quota.windowMs);

/** What a fixed-window counter says when this request is the `count`th of its window. */
export function decisionFor(quota: Quota, count: number, at: number): RateDecision {
  return {
    allowed: count <= quota.limit,
    limit: quota.limit,
    remaining: Math.max(0, quota.limit - count),
    resetMs: (windowIndex(quota, at) + 1) * quota.windowMs - at,
    windowMs: quota.windowMs,
  };
}

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
}

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
