import { InMemoryRateLimiter } from '../../src/adapters/memory/rate-limiter.js';
import { CrnFormat, DEFAULT_CRN_PATTERN } from '../../src/domain/crn.js';
import type { StoreContext } from '../../src/ports/stores.js';

/** A store context for tests: the default crn pattern, logs kept for assertions. */
export function makeTestContext(overrides: Partial<StoreContext['rateLimit']> = {}) {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const context: StoreContext = {
    crnFormat: CrnFormat.of(DEFAULT_CRN_PATTERN),
    log: (level, fields, message) => {
      lines.push({ level, fields, message });
    },
    rateLimit: {
      prefix: 'case-read-test:',
      timeoutMs: 50,
      onStoreFailure: 'local',
      local: () => new InMemoryRateLimiter(),
      ...overrides,
    },
  };
  return { context, lines };
}

export const testContext: StoreContext = makeTestContext().context;
