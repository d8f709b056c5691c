import type { StoreKind } from '../../ports/stores.js';
import { maskedUrl, parsedUrl } from '../shared/store-urls.js';
import { type RedisSettings, redisSettings } from './settings.js';

const REDIS_URL = /^rediss?:\/\//;

function redisUrlProblem(url: string): string | undefined {
  const parsed = parsedUrl(url);
  if (parsed === undefined) return 'redis:// needs a host and port: redis://HOST:PORT[/DB]';
  if (parsed.hostname === '') return 'redis:// needs a host: redis://HOST:PORT[/DB]';
  if (parsed.pathname.length > 1 && !/^\/\d{1,2}$/.test(parsed.pathname)) {
    return 'the redis:// database is a number 0..99: redis://HOST:PORT/DB';
  }
  if (parsed.search !== '') return 'redis:// takes no query parameters';
  return undefined;
}

const displayRedisUrl = (url: string): string => maskedUrl(url, 'redis://(unparseable)');

/**
 * `redis://[:PASSWORD@]HOST:PORT[/DB]` (or `rediss://` for TLS): rate-limit counts shared by
 * every instance. The client is loaded only when a Redis store is opened.
 */
export const redisStores: StoreKind<RedisSettings> = {
  name: 'redis',
  form: 'redis://HOST:PORT[/DB]',
  recognises: (url) => REDIS_URL.test(url),
  problem: redisUrlProblem,
  display: displayRedisUrl,
  settings: redisSettings,
  rateLimit: {
    open: async (url, context) => {
      const { Redis } = await import('ioredis');
      const { RedisRateLimiter } = await import('./rate-limiter.js');
      const { timeoutMs, prefix, onStoreFailure } = context.settings;
      const { localRateLimiter, onRateLimitTransition: onTransition } = context;
      const redis = new Redis(url, {
        commandTimeout: timeoutMs,
        connectTimeout: Math.max(timeoutMs, 1000),
        // Never queue a command while Redis is unreachable: fail at once, use the failure mode.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        // Reconnect for ever, at most a second apart.
        retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
        lazyConnect: true,
      });
      // Connection errors are handled by the failure mode; without a listener they would crash.
      redis.on('error', () => {});
      try {
        await redis.connect();
      } catch {
        context.log(
          'warn',
          { store: 'rate-limit store' },
          'rate-limit store unreachable at start; it will be retried',
        );
      }
      const limiter = new RedisRateLimiter(redis, {
        prefix,
        onStoreFailure,
        local: localRateLimiter(),
        log: context.log,
        ...(onTransition ? { onTransition } : {}),
      });
      return {
        value: limiter,
        description: `${displayRedisUrl(url)} (prefix ${prefix}, on failure: ${onStoreFailure})`,
        // Only `deny` needs Redis to answer requests; the other modes serve without it.
        ping: async () => {
          if (onStoreFailure === 'deny') await limiter.ping();
        },
        close: async () => {
          redis.disconnect();
        },
      };
    },
  },
};
