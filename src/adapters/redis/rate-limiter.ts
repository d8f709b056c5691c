import type { Redis } from 'ioredis';
import { decisionFor, type Quota, type RateDecision, windowIndex } from '../../domain/access/quota.js';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';
import type { RateLimitFailureMode, StoreLog } from '../../ports/stores.js';

/**
 * One round trip per request: increment this window's counter and, on its first count,
 * let it expire when the window is over (plus a second of slack for clock skew). Redis
 * runs the script atomically, so concurrent requests from any instance are counted once each.
 */
const CONSUME = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
`;

type ScriptedRedis = Redis & { caseReadConsume(key: string, ttlMs: number): Promise<number> };

export interface RedisRateLimiterOptions {
  readonly prefix: string;
  readonly onStoreFailure: RateLimitFailureMode;
  /** The in-process limiter for the `local` failure mode. */
  readonly local: RateLimiter;
  readonly log: StoreLog;
  readonly onTransition?: (to: 'store' | 'fallback') => void;
}

/**
 * Fixed-window counts shared by every instance, in Redis (`RATE_LIMIT_STORE=redis://…`).
 * Keys are `PREFIX` + `rl:{limit}/{windowMs}:{api key id}:{window}`; windows are aligned
 * to the epoch, so instances agree on them as long as their clocks do (NTP).
 *
 * Every command has a timeout (the client's `commandTimeout`) and is never queued while
 * Redis is unreachable, so a lost Redis costs a request at most that timeout. Then
 * `onStoreFailure` decides: `local` counts in this process with the same quota, `allow`
 * lets the request through, `deny` refuses it with 503. The switch each way is logged once
 * and counted; every request tries Redis again, so the limiter recovers by itself.
 */
export class RedisRateLimiter implements RateLimiter {
  private failing = false;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    redis.defineCommand('caseReadConsume', { numberOfKeys: 1, lua: CONSUME });
  }

  async consume(key: string, quota: Quota, now: Date): Promise<RateDecision> {
    const at = now.getTime();
    const window = windowIndex(quota, at);
    const ttl = (window + 1) * quota.windowMs - at + 1000;
    const slot = `${this.options.prefix}rl:${quota.limit}/${quota.windowMs}:${key}:${window}`;
    let count: number;
    try {
      count = await (this.redis as ScriptedRedis).caseReadConsume(slot, ttl);
    } catch (error) {
      return this.failed(error, key, quota, now);
    }
    if (this.failing) {
      this.failing = false;
      this.options.log(
        'info',
        { store: 'rate-limit store' },
        'rate-limit store is back; counting in Redis again',
      );
      this.options.onTransition?.('store');
    }
    return decisionFor(quota, count, at);
  }

  private failed(error: unknown, key: string, quota: Quota, now: Date): Promise<RateDecision> {
    const mode = this.options.onStoreFailure;
    if (!this.failing) {
      this.failing = true;
      this.options.log(
        'warn',
        { store: 'rate-limit store', mode, err: labelOf(error) },
        `rate-limit store unreachable; failure mode ${mode} in force`,
      );
      this.options.onTransition?.('fallback');
    }
    if (mode === 'local') return this.options.local.consume(key, quota, now);
    if (mode === 'allow') return Promise.resolve(decisionFor(quota, 0, now.getTime()));
    throw new StoreUnavailableError('rate-limit store', labelOf(error));
  }

  /** For readiness: Redis answers. */
  async ping(): Promise<void> {
    await this.redis.ping();
  }
}

/** A label safe for a log line: the error's kind, never its text (which may name the host). */
function labelOf(error: unknown): string {
  const message = (error as Error).message ?? '';
  if (/timed out/i.test(message)) return 'timeout';
  if (/writ(e)?able|closed|ECONNREFUSED|connect/i.test(message)) return 'connection';
  return 'error';
}
