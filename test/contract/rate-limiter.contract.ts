import { describe, expect, it } from 'vitest';
import type { Quota } from '../../src/domain/access/quota.js';
import type { RateLimiter } from '../../src/ports/rate-limiter.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0); // a multiple of every window used here
const at = (ms: number) => new Date(T0 + ms);

/**
 * The contract of the rate limiter port, run by every adapter. `make` gives a fresh, empty
 * limiter; `atOnce` says whether it counts at once from what the process holds (`consumeNow`):
 * the cases of that are reported skipped for one that does not.
 */
export function describeRateLimiterContract(
  name: string,
  make: () => Promise<RateLimiter> | RateLimiter,
  { atOnce }: { readonly atOnce: boolean },
): void {
  describe(`RateLimiter contract: ${name}`, () => {
    const quota: Quota = { limit: 3, windowMs: 1000 };

    it('allows the first `limit` requests in a window, then refuses, counting down', async () => {
      const limiter = await make();
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push(await limiter.consume('key-1', quota, at(100 + i)));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
      expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
      expect(decisions.every((d) => d.limit === 3 && d.windowMs === 1000)).toBe(true);
    });

    it('aligns windows to the epoch and says how long is left', async () => {
      const limiter = await make();
      expect((await limiter.consume('key-1', quota, at(250))).resetMs).toBe(750);
      expect((await limiter.consume('key-1', quota, at(999))).resetMs).toBe(1);
    });

    it('starts afresh in the next window', async () => {
      const limiter = await make();
      for (let i = 0; i < 4; i++) await limiter.consume('key-1', quota, at(10));
      const next = await limiter.consume('key-1', quota, at(1000));
      expect(next).toMatchObject({ allowed: true, remaining: 2, resetMs: 1000 });
    });

    it('counts keys apart, and one key under two quotas apart', async () => {
      const limiter = await make();
      for (let i = 0; i < 3; i++) await limiter.consume('key-1', quota, at(10));
      expect((await limiter.consume('key-1', quota, at(11))).allowed).toBe(false);
      expect((await limiter.consume('key-2', quota, at(11))).allowed).toBe(true);
      expect((await limiter.consume('key-1', { limit: 10, windowMs: 60_000 }, at(11))).allowed).toBe(true);
    });

    it(`offers counting at once ${atOnce ? '(consumeNow)' : 'nowhere: consumeNow is absent'}, as declared`, async () => {
      expect((await make()).consumeNow !== undefined).toBe(atOnce);
    });

    it.skipIf(!atOnce)('counted at once: the same count as consume, one count between them', async () => {
      const limiter = await make();
      if (limiter.consumeNow === undefined) throw new Error('declared to count at once, and it does not');
      const decisions = [
        await limiter.consume('key-1', quota, at(100)),
        limiter.consumeNow('key-1', quota, at(101)),
        await limiter.consume('key-1', quota, at(102)),
        limiter.consumeNow('key-1', quota, at(103)),
      ];
      expect(decisions.map((d) => [d.allowed, d.remaining, d.resetMs])).toEqual([
        [true, 2, 900],
        [true, 1, 899],
        [true, 0, 898],
        [false, 0, 897],
      ]);
    });

    it('keeps counting under concurrent requests: exactly `limit` are allowed', async () => {
      const limiter = await make();
      const many = await Promise.all(
        Array.from({ length: 20 }, () => limiter.consume('key-c', { limit: 7, windowMs: 60_000 }, at(5))),
      );
      expect(many.filter((d) => d.allowed)).toHaveLength(7);
    });
  });
}
