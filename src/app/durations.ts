const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms`, `30s`, `15m`, `12h`, `90d` into milliseconds; throws naming the expected form. */
export function parseDuration(raw: string, what = 'duration'): number {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw.trim());
  if (!match) throw new Error(`${what} must look like 30s, 15m, 12h or 90d`);
  const ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  if (ms <= 0) throw new Error(`${what} must be more than zero`);
  return ms;
}

/** Parses a rate limit `N/DURATION`, e.g. `100/1s`, `6000/1m`: the same rule the service applies. */
export { parseQuota as parseRateLimit } from '../domain/access/rate-limit.js';
