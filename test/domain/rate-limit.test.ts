import { describe, expect, it } from 'vitest';
import { parseQuota, type RateDecision } from '../../src/domain/access/quota.js';
import { applyRateLimit } from '../../src/domain/access/rate-limit.js';
import { RateLimitedError } from '../../src/domain/errors.js';

describe('parseQuota', () => {
  it.each([
    ['100/1s', { limit: 100, windowMs: 1000 }],
    ['6000/1m', { limit: 6000, windowMs: 60_000 }],
    ['10/500ms', { limit: 10, windowMs: 500 }],
    ['5/2h', { limit: 5, windowMs: 7_200_000 }],
  ])('%s', (raw, quota) => expect(parseQuota(raw)).toEqual(quota));

  it.each(['100', '100/s', '0/1s', '100/0s', '-1/1s', '1.5/1s', '100/1y', '100/1s/2', ' '])(
    'refuses %j',
    (raw) => {
      expect(() => parseQuota(raw)).toThrow('rate limit must look like N/DURATION');
    },
  );
});

describe('applyRateLimit (step 5)', () => {
  const clock = { now: () => new Date('2026-01-01T00:00:00.250Z') };
  const decision = (allowed: boolean): RateDecision => ({
    allowed,
    limit: 3,
    remaining: allowed ? 1 : 0,
    resetMs: 1750,
    windowMs: 2000,
  });

  it('passes the key id, quota and time to the limiter and returns its decision', async () => {
    const calls: unknown[] = [];
    const limiter = {
      consume: async (...args: unknown[]) => {
        calls.push(args);
        return decision(true);
      },
    };
    expect(await applyRateLimit({ limiter, clock }, 'key-id', { limit: 3, windowMs: 2000 })).toEqual(
      decision(true),
    );
    expect(calls).toEqual([['key-id', { limit: 3, windowMs: 2000 }, clock.now()]]);
  });

  it('refuses with RateLimitedError, whole seconds to wait rounded up', async () => {
    const limiter = { consume: async () => decision(false) };
    const error = await applyRateLimit({ limiter, clock }, 'k', { limit: 3, windowMs: 2000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterSeconds).toBe(2);
    expect((error as RateLimitedError).message).toBe(
      'rate limit of 3 requests per 2 s exceeded; retry after the window resets',
    );
    expect(
      new RateLimitedError({ limit: 1, remaining: 0, resetMs: 1, windowMs: 1000 }).retryAfterSeconds,
    ).toBe(1);
  });
});
