import { decisionFor, type Quota, type RateDecision, windowIndex } from '../../domain/access/quota.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';

/**
 * Fixed-window counters in this process (`RATE_LIMIT_STORE=memory`): right for one
 * instance; several instances each count on their own. Windows are aligned to the epoch,
 * so counts from an old window are dropped rather than kept.
 */
export class InMemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { window: number; count: number }>();

  async consume(key: string, quota: Quota, now: Date): Promise<RateDecision> {
    return this.consumeNow(key, quota, now);
  }

  consumeNow(key: string, quota: Quota, now: Date): RateDecision {
    const at = now.getTime();
    const window = windowIndex(quota, at);
    const slot = `${quota.limit}/${quota.windowMs} ${key}`;
    const current = this.windows.get(slot);
    const count = current && current.window === window ? current.count + 1 : 1;
    if (!current && this.windows.size >= 100_000) this.sweep(at);
    this.windows.set(slot, { window, count });
    return decisionFor(quota, count, at);
  }

  /** Drops counters of windows that have ended. */
  private sweep(at: number): void {
    for (const [slot, { window }] of this.windows) {
      const windowMs = Number(slot.slice(slot.indexOf('/') + 1, slot.indexOf(' ')));
      if ((window + 1) * windowMs <= at) this.windows.delete(slot);
    }
  }
}
