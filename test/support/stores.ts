import { loadSome } from '../../src/app/config.js';
import { STORE_SETTINGS, storeContextOf } from '../../src/app/stores.js';
import type { StoreContext } from '../../src/ports/stores.js';

/**
 * A store context for tests: every setting at its default, as `serve` reads an empty
 * environment, with a test key prefix; logs kept for assertions.
 */
export function makeTestContext(overrides: Partial<StoreContext['rateLimit']> = {}) {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const defaults = storeContextOf(loadSome({}, STORE_SETTINGS), (level, fields, message) => {
    lines.push({ level, fields, message });
  });
  const context: StoreContext = {
    ...defaults,
    rateLimit: { ...defaults.rateLimit, prefix: 'case-read-test:', ...overrides },
  };
  return { context, lines };
}

export const testContext: StoreContext = makeTestContext().context;
