import { StoreError, type StoreKind } from '../../ports/stores.js';
import { closeOnce } from '../shared/close-once.js';
import { isLoopbackHost } from '../shared/loopback.js';
import { maskedUrl, parsedUrl } from '../shared/store-urls.js';
import { isCertificateFailure } from '../shared/tls-failures.js';
import { type RedisSettings, redisSettings, redisTlsFiles } from './settings.js';

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

const isTls = (url: string) => url.startsWith('rediss://');

/** `RATE_LIMIT_TLS_*` with a `redis://` URL would be ignored: refused instead. */
function tlsSettingsProblem(url: string, settings: RedisSettings | undefined): string | undefined {
  if (settings === undefined || isTls(url) || redisTlsFiles(settings).length === 0) return undefined;
  return 'RATE_LIMIT_TLS_CA, RATE_LIMIT_TLS_CERT and RATE_LIMIT_TLS_KEY need a rediss:// URL (TLS)';
}

/** Engine codes that say nothing answered at all: nothing to ask the server what it speaks. */
const UNREACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Why a failed first connection is a configuration to fix rather than a Redis that is down:
 * its certificate does not verify, or it speaks TLS to `redis://`, or plaintext to
 * `rediss://`. Undefined: down or unreachable, which `serve` tolerates.
 */
async function startRefusal(url: string, error: { code?: string } | undefined, timeoutMs: number) {
  if (isCertificateFailure(error?.code)) {
    return `rate-limit store: the server's certificate does not verify (${error?.code}); RATE_LIMIT_TLS_CA must hold the CA that signed it`;
  }
  if (error?.code !== undefined && UNREACHED.has(error.code)) return undefined;
  const { hostname, port } = new URL(url);
  const { whatItSpeaks } = await import('./probe.js');
  const speaks = await whatItSpeaks(hostname.replace(/^\[|\]$/g, ''), Number(port || 6379), timeoutMs);
  if (speaks === 'tls' && !isTls(url)) return 'rate-limit store: the server speaks TLS; use rediss://';
  if (speaks === 'plain' && isTls(url))
    return 'rate-limit store: the server does not speak TLS (rediss:// was given)';
  return undefined;
}

/**
 * `redis://[:PASSWORD@]HOST:PORT[/DB]` (or `rediss://` for TLS, the host name verified, with
 * `RATE_LIMIT_TLS_CA` for a private CA and `RATE_LIMIT_TLS_CERT` / `_KEY` for a client
 * certificate): rate-limit counts shared by every instance. The client is loaded only when a
 * Redis store is opened. At start a Redis that is down is tolerated (the failure mode counts
 * meanwhile), but one whose certificate does not verify, or that speaks TLS where plaintext
 * was asked or the reverse, stops the start.
 */
export const redisStores: StoreKind<RedisSettings> = {
  name: 'redis',
  form: 'redis://HOST:PORT[/DB]',
  recognises: (url) => REDIS_URL.test(url),
  problem: (url, settings) => redisUrlProblem(url) ?? tlsSettingsProblem(url, settings),
  display: displayRedisUrl,
  settings: redisSettings,
  hop: (url) => {
    const { hostname, port } = new URL(url);
    return {
      to: `${hostname}:${port || 6379}`,
      loopback: isLoopbackHost(hostname),
      // rediss:// verifies the chain and the host name, always.
      tls: isTls(url) ? 'verify-full' : 'none',
      fix: 'use rediss:// (with RATE_LIMIT_TLS_CA for a private CA)',
    };
  },
  rateLimit: {
    open: async (url, context) => {
      const { Redis } = await import('ioredis');
      const { RedisConnector } = await import('./connector.js');
      const { RedisRateLimiter } = await import('./rate-limiter.js');
      const { readRedisTls, reloadRedisTls } = await import('./tls.js');
      const settings = context.settings;
      const { timeoutMs, prefix, onStoreFailure } = settings;
      const { localRateLimiter, onRateLimitTransition: onTransition } = context;
      const initial = isTls(url) ? readRedisTls(settings) : undefined;
      // The client certificate in use: replaced by each reload.
      let inUse = initial?.inUse;
      const redis = new Redis(url, {
        ...(initial !== undefined ? { tls: initial.tls } : {}),
        commandTimeout: timeoutMs,
        connectTimeout: Math.max(timeoutMs, 1000),
        // Never queue a command while Redis is unreachable: fail at once, use the failure mode.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        // Reconnect for ever, at most a second apart.
        retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
        lazyConnect: true,
        // ioredis's own connector, but a stream that fails twice (Deno's TLS) does not throw.
        Connector: RedisConnector,
      });
      // Connection errors are handled by the failure mode; without a listener they would crash.
      let lastError: { code?: string } | undefined;
      redis.on('error', (error: { code?: string }) => {
        lastError = error;
      });
      try {
        await redis.connect();
      } catch {
        const refusal = await startRefusal(url, lastError, Math.max(timeoutMs, 1000));
        if (refusal !== undefined) {
          redis.disconnect();
          throw new StoreError(refusal);
        }
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
        close: closeOnce(async () => {
          redis.disconnect();
        }),
        ...(initial !== undefined && redisTlsFiles(settings).length > 0
          ? {
              tls: {
                name: 'rate-limit-client',
                files: redisTlsFiles(settings),
                current: () => inUse,
                reload: async () => {
                  const next = await reloadRedisTls(settings);
                  // The connector reads the options at each connection: the next one uses these.
                  redis.options.tls = next.tls;
                  inUse = next.inUse;
                  return inUse;
                },
              },
            }
          : {}),
      };
    },
  },
};
