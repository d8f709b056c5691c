import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStores } from '../../../src/adapters/redis/store-kind.js';
import { StoreUnavailableError } from '../../../src/domain/errors.js';
import type { RateLimitFailureMode } from '../../../src/ports/stores.js';
import { OwnRedis, uniquePrefix } from '../../support/redis.js';
import { makeRedisContext } from '../../support/stores.js';

const quota = { limit: 3, windowMs: 60_000 };

let redis: OwnRedis;
beforeAll(async () => {
  redis = await OwnRedis.start();
});
afterAll(async () => {
  await redis.kill();
});

async function limiterWith(mode: RateLimitFailureMode) {
  const transitions: string[] = [];
  const { context, lines } = makeRedisContext(
    { prefix: uniquePrefix(mode), onStoreFailure: mode, timeoutMs: 200 },
    { onRateLimitTransition: (to) => transitions.push(to) },
  );
  const store = await redisStores.rateLimit?.open(redis.url, context);
  if (!store) throw new Error('redis cannot count requests');
  return { store, limiter: store.value, transitions, lines };
}

/** Consumes until Redis answers again (the client reconnects within a second). */
async function untilBack(consume: () => Promise<unknown>, transitions: string[]) {
  const deadline = Date.now() + 10_000;
  while (transitions.at(-1) !== 'store') {
    if (Date.now() > deadline) throw new Error('the limiter did not go back to Redis');
    await consume().catch(() => {});
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the Redis rate limiter when Redis fails (RATE_LIMIT_ON_STORE_FAILURE)', () => {
  it('local: counts in this process with the same quota, logs each switch once, and returns to Redis', async () => {
    const { store, limiter, transitions, lines } = await limiterWith('local');
    // Held still: the counts below are of one window whatever the wall clock does meanwhile
    // (the windows are aligned to the epoch; five counts made on it could straddle a minute's end).
    const at = new Date();
    const now = () => at;
    expect((await limiter.consume('k', quota, now())).remaining).toBe(2);
    await redis.kill();
    const during = [];
    for (let i = 0; i < 5; i++) during.push(await limiter.consume('k', quota, now()));
    // The local limiter starts its own count: 3 allowed, then refused, as the quota says.
    expect(during.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(transitions).toEqual(['fallback']);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(lines[0]?.message).toMatch(/failure mode local in force/);
    await redis.up();
    await untilBack(() => limiter.consume('other', quota, now()), transitions);
    expect(transitions).toEqual(['fallback', 'store']);
    // Back in Redis: the restarted server kept nothing (no persistence), so the count there
    // starts again, and it is Redis that holds it now.
    expect((await limiter.consume('k', quota, now())).remaining).toBe(2);
    const { Redis } = await import('ioredis');
    const direct = new Redis(redis.url);
    expect(await direct.keys('*rl:3/60000:k:*')).toHaveLength(1);
    direct.disconnect();
    expect(lines.filter((l) => l.level === 'info').map((l) => l.message)).toEqual([
      expect.stringMatching(/back/),
    ]);
    await store.close();
  });

  it('allow: lets every request through while Redis is down', async () => {
    const { store, limiter, transitions } = await limiterWith('allow');
    await redis.kill();
    const during = [];
    for (let i = 0; i < 6; i++) during.push(await limiter.consume('k', quota, new Date()));
    expect(during.every((d) => d.allowed)).toBe(true);
    expect(await store.ping().then(() => 'ready')).toBe('ready');
    await redis.up();
    await untilBack(() => limiter.consume('k', quota, new Date()), transitions);
    await store.close();
  });

  it('deny: refuses with StoreUnavailableError (503) and readiness fails, until Redis is back', async () => {
    const { store, limiter, transitions } = await limiterWith('deny');
    await redis.kill();
    const error = await limiter.consume('k', quota, new Date()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).store).toBe('rate-limit store');
    await expect(store.ping()).rejects.toThrow();
    await redis.up();
    await untilBack(() => limiter.consume('k', quota, new Date()), transitions);
    expect((await limiter.consume('k', quota, new Date())).allowed).toBe(true);
    await store.close();
  });
});
