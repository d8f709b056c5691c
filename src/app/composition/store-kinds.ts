import { jsonlStores } from '../../adapters/jsonl/store-kind.js';
import { InMemoryRateLimiter } from '../../adapters/memory/rate-limiter.js';
import { memoryStores } from '../../adapters/memory/store-kind.js';
import { postgresStores } from '../../adapters/postgres/store-kind.js';
import { redisStores } from '../../adapters/redis/store-kind.js';
import { sqliteStores } from '../../adapters/sqlite/store-kind.js';
import { upstreamStores } from '../../adapters/upstream/store-kind.js';
import type { Environment, StoreLog, StoreWiring } from '../../ports/stores.js';
import { StoreRegistry } from '../stores.js';
import { type Config, loadConfig } from './config.js';

/**
 * The store kinds this service knows, first match wins. Each adapter folder that holds
 * state brings its own kind (its URL form, its own settings, its roles); a new store
 * technology is that folder plus one line here. Configuration, `config check`, the usage
 * text, `serve` and every CLI command reach stores only through this registry.
 */
export const STORE_REGISTRY = new StoreRegistry([
  memoryStores,
  sqliteStores,
  jsonlStores,
  postgresStores,
  redisStores,
  upstreamStores,
]);

/** The service's configuration, with the store kinds this service knows (`serve`, `config check`). */
export const loadServiceConfig = (env: Environment): Config => loadConfig(env, STORE_REGISTRY);

/** What every store is opened with: the crn pattern, where it logs, and the hooks for its metrics. */
export function storeWiring(
  crnFormat: Config['CRN_PATTERN'],
  log: StoreLog,
  metrics: Pick<
    StoreWiring,
    'observeUpstream' | 'onRateLimitTransition' | 'onAccessListenerFailure' | 'tracing' | 'requestDeadlineMs'
  > = {},
): StoreWiring {
  return { crnFormat, log, localRateLimiter: () => new InMemoryRateLimiter(), ...metrics };
}
