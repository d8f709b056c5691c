import type { AccessDirectory } from '../../ports/access-directory.js';
import type { AuditLog } from '../../ports/audit-log.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';
import type { Opened, StoreWiring } from '../../ports/stores.js';
import type { Config } from './config.js';
import { STORE_REGISTRY } from './store-kinds.js';

/** The four stores `serve` opens, each with its description, readiness check and close. */
export interface ServiceStores {
  readonly cases: Opened<CaseRepository>;
  readonly access: Opened<AccessDirectory>;
  readonly audit: Opened<AuditLog>;
  readonly rateLimit: Opened<RateLimiter>;
}

/** Opens every store, or none: a store that fails to open closes the ones already open. */
export async function openStores(config: Config, wiring: StoreWiring): Promise<ServiceStores> {
  const opened: Opened<unknown>[] = [];
  const keep = async <T>(opening: Promise<Opened<T>>): Promise<Opened<T>> => {
    const store = await opening;
    opened.push(store);
    return store;
  };
  try {
    return {
      cases: await keep(STORE_REGISTRY.openCaseRepository(config.CASE_STORE, wiring)),
      access: await keep(STORE_REGISTRY.openAccessDirectory(config.ACCESS_STORE, wiring)),
      audit: await keep(STORE_REGISTRY.openAuditLog(config.AUDIT_STORE, wiring, { create: true })),
      rateLimit: await keep(STORE_REGISTRY.openRateLimiter(config.RATE_LIMIT_STORE, wiring)),
    };
  } catch (error) {
    await closeQuietly(opened.reverse());
    throw error;
  }
}

/** Closes `stores` in the order given, each whatever the one before did: after a failed start. */
export async function closeQuietly(stores: readonly Opened<unknown>[]): Promise<void> {
  for (const store of stores) await store.close().catch(() => {});
}
