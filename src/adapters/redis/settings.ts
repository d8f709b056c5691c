import * as z from 'zod';
import type { RateLimitFailureMode } from '../../ports/stores.js';
import { settingsReader, wholeNumber } from '../shared/variables.js';

/** How the shared rate-limit store is used: its key prefix, its patience, and what stands in while it is down. */
export interface RedisSettings {
  readonly prefix: string;
  /** Each command's timeout. */
  readonly timeoutMs: number;
  readonly onStoreFailure: RateLimitFailureMode;
}

/** `RATE_LIMIT_PREFIX`, `RATE_LIMIT_TIMEOUT_MS`, `RATE_LIMIT_ON_STORE_FAILURE`: the Redis kind's own settings. */
export const redisSettings = settingsReader(
  z.object({
    RATE_LIMIT_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9:._-]{1,64}$/, { error: 'expected 1-64 letters, digits or : . _ -' })
      .default('case-read:'),
    RATE_LIMIT_TIMEOUT_MS: wholeNumber('RATE_LIMIT_TIMEOUT_MS', 50, 1, 10_000),
    RATE_LIMIT_ON_STORE_FAILURE: z
      .enum(['local', 'allow', 'deny'], { error: 'expected local, allow or deny' })
      .default('local'),
  }),
  (v): RedisSettings => ({
    prefix: v.RATE_LIMIT_PREFIX,
    timeoutMs: v.RATE_LIMIT_TIMEOUT_MS,
    onStoreFailure: v.RATE_LIMIT_ON_STORE_FAILURE,
  }),
);
