import * as z from 'zod';
import type { RateLimitFailureMode } from '../../ports/stores.js';
import { certificateWithKey, oneOf, optionalText, settingsReader, wholeNumber } from '../shared/variables.js';

/** How the shared rate-limit store is used: its key prefix, its patience, what stands in while it is down, and its TLS files. */
export interface RedisSettings {
  readonly prefix: string;
  /** Each command's timeout. */
  readonly timeoutMs: number;
  readonly onStoreFailure: RateLimitFailureMode;
  /** The CA bundle the server's certificate is verified with (`rediss://` only); else the runtime's public CAs. */
  readonly tlsCaFile?: string;
  /** A client certificate and its key, for a server that asks for one. */
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
}

/**
 * `RATE_LIMIT_PREFIX`, `RATE_LIMIT_TIMEOUT_MS`, `RATE_LIMIT_ON_STORE_FAILURE` and
 * `RATE_LIMIT_TLS_CA` / `_CERT` / `_KEY`: the Redis kind's own settings.
 */
export const redisSettings = settingsReader(
  z
    .object({
      RATE_LIMIT_PREFIX: z
        .string()
        .regex(/^[A-Za-z0-9:._-]{1,64}$/, { error: 'expected 1-64 letters, digits or : . _ -' })
        .default('case-read:'),
      RATE_LIMIT_TIMEOUT_MS: wholeNumber('RATE_LIMIT_TIMEOUT_MS', 50, 1, 10_000),
      RATE_LIMIT_ON_STORE_FAILURE: oneOf(['local', 'allow', 'deny'], 'local'),
      RATE_LIMIT_TLS_CA: optionalText(),
      RATE_LIMIT_TLS_CERT: optionalText(),
      RATE_LIMIT_TLS_KEY: optionalText(),
    })
    .superRefine((env, ctx) => certificateWithKey(env, ctx, 'RATE_LIMIT_TLS_CERT', 'RATE_LIMIT_TLS_KEY')),
  (v): RedisSettings => ({
    prefix: v.RATE_LIMIT_PREFIX,
    timeoutMs: v.RATE_LIMIT_TIMEOUT_MS,
    onStoreFailure: v.RATE_LIMIT_ON_STORE_FAILURE,
    ...(v.RATE_LIMIT_TLS_CA !== undefined ? { tlsCaFile: v.RATE_LIMIT_TLS_CA } : {}),
    ...(v.RATE_LIMIT_TLS_CERT !== undefined ? { tlsCertFile: v.RATE_LIMIT_TLS_CERT } : {}),
    ...(v.RATE_LIMIT_TLS_KEY !== undefined ? { tlsKeyFile: v.RATE_LIMIT_TLS_KEY } : {}),
  }),
);

/** The TLS files that are set: the CA, the client certificate and its key. */
export const redisTlsFiles = (settings: RedisSettings): string[] =>
  [settings.tlsCaFile, settings.tlsCertFile, settings.tlsKeyFile].filter((f): f is string => f !== undefined);
