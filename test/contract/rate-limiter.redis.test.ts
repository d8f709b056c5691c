import { afterAll } from 'vitest';
import { redisStores } from '../../src/adapters/redis/store-kind.js';
import type { RateLimiter } from '../../src/ports/rate-limiter.js';
import type { Opened } from '../../src/ports/stores.js';
import { dropPrefix, REDIS_URL, uniquePrefix } from '../support/redis.js';
import { makeRedisContext } from '../support/stores.js';
import { describeRateLimiterContract } from './rate-limiter.contract.js';

const opened: { store: Opened<RateLimiter>; prefix: string }[] = [];
afterAll(async () => {
  for (const { store, prefix } of opened) {
    await store.close();
    await dropPrefix(prefix);
  }
});

// `deny` on failure: a Redis that is not there fails the suite instead of being covered for.
describeRateLimiterContract(
  'redis',
  async () => {
    const prefix = uniquePrefix('contract');
    const { context } = makeRedisContext({ prefix, onStoreFailure: 'deny', timeoutMs: 1000 });
    const store = await redisStores.rateLimit?.open(REDIS_URL, context);
    if (!store) throw new Error('redis cannot count requests');
    opened.push({ store, prefix });
    return store.value;
  },
  { atOnce: false },
);
