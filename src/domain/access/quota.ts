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
