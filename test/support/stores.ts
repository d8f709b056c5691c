import { InMemoryRateLimiter } from '../../src/adapters/memory/rate-limiter.js';
import type { RedisSettings } from '../../src/adapters/redis/settings.js';
import { redisSettings } from '../../src/adapters/redis/settings.js';
import { CrnFormat } from '../../src/domain/crn.js';
import type {
  Environment,
  NoSettings,
  StoreContext,
  StoreSettingsReader,
  StoreWiring,
} from '../../src/ports/stores.js';

/** What a kind's reader makes of `env` (its defaults, for an empty one); throws on a problem. */
export function settingsOf<S>(reader: StoreSettingsReader<S>, env: Environment = {}): S {
  const read = reader.read(env);
  if ('problems' in read) throw new Error(read.problems.join('; '));
  return read.settings;
}

/** Store wiring for tests, as `serve` wires an empty environment; logs kept for assertions. */
export function makeTestWiring(overrides: Partial<StoreWiring> = {}) {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const wiring: StoreWiring = {
    crnFormat: CrnFormat.default,
    log: (level, fields, message) => {
      lines.push({ level, fields, message });
    },
    localRateLimiter: () => new InMemoryRateLimiter(),
    ...overrides,
  };
  return { wiring, lines };
}

/** A context for a kind with no settings of its own. */
export const testContext: StoreContext<NoSettings> = { ...makeTestWiring().wiring, settings: {} };

/** A context for the Redis kind: its defaults with a test key prefix, and any overrides. */
export function makeRedisContext(
  overrides: Partial<RedisSettings> = {},
  hooks: Partial<StoreWiring> = {},
): { context: StoreContext<RedisSettings>; lines: ReturnType<typeof makeTestWiring>['lines'] } {
  const { wiring, lines } = makeTestWiring(hooks);
  const settings = { ...settingsOf(redisSettings), prefix: 'case-read-test:', ...overrides };
  return { context: { ...wiring, settings }, lines };
}
