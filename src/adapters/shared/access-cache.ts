import type { ApiKeyRecord, Client } from '../../domain/access/model.js';
import type { Permission } from '../../domain/access/permissions.js';
import { deepFreeze } from '../../domain/freeze.js';
import type { HeldAdmission } from '../../ports/access-directory.js';

/** At most this many entries per cache; past it the cache starts again empty. */
const CACHE_LIMIT = 10_000;

/**
 * What an access directory's request-path reader keeps between requests: clients, keys,
 * revocation answers and grants, each frozen so no caller can change what the next one
 * reads. Lookups that find nothing are not kept (an unknown key id cannot grow a cache).
 * When to drop it all, and when to trust it at all, is the store's own business (SQLite's
 * data version; PostgreSQL's notifications, trusted only while its listener is up and
 * answering).
 */
export class AccessCache {
  readonly clients = new Map<string, Client>();
  readonly keys = new Map<string, ApiKeyRecord>();
  readonly revoked = new Map<string, boolean>();
  readonly grants = new Map<string, readonly Permission[]>();

  /** Keeps `value` (frozen) under `key`, and returns it. */
  static remember<V>(cache: Map<string, V>, key: string, value: V): V {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    const frozen = deepFreeze(value);
    cache.set(key, frozen);
    return frozen;
  }

  /** The key a revocation answer is kept under. */
  static revocationKey = (serialNumber: string, clientId: string) => `${serialNumber} ${clientId}`;

  /** The key, its client and the revocation answer, when all three are held (`AccessDirectory.heldAdmission`). */
  admission(keyId: string, clientId: string, serialNumber: string): HeldAdmission | undefined {
    const key = this.keys.get(keyId);
    if (key === undefined) return undefined;
    const client = this.clients.get(clientId);
    if (client === undefined) return undefined;
    const revoked = this.revoked.get(AccessCache.revocationKey(serialNumber, clientId));
    return revoked === undefined ? undefined : { key, client, revoked };
  }

  clear(): void {
    this.clients.clear();
    this.keys.clear();
    this.revoked.clear();
    this.grants.clear();
  }
}
