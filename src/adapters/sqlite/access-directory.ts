import type { ApiKeyRecord, Client } from '../../domain/access/model.js';
import { isPermission, type Permission } from '../../domain/access/permissions.js';
import type {
  AccessDirectory,
  CertificateSeen,
  HeldAdmission,
  RenewalClaim,
} from '../../ports/access-directory.js';
import { AccessCache } from '../shared/access-cache.js';
import {
  claimRenewalSql,
  completeRenewalSql,
  noteCertificateSql,
  releaseRenewalSql,
} from '../shared/access-rows.js';
import {
  ACCESS_STORE,
  AccessStoreError,
  localWrites,
  ROWS,
  type SqliteClientRow,
  type SqliteKeyRow,
} from './access-schema.js';
import { openReadOnlyStore, openWritableStore, reading } from './database.js';
import type { SqlDatabase, SqliteDriver } from './driver.js';

/**
 * The access directory in a SQLite file, as the request path reads it: `serve` opens it
 * read-only (the operator's changes go through {@link SqliteAccessAdministration}); WAL lets
 * both run at once.
 *
 * Reads are cached until the data changes: SQLite's `PRAGMA data_version` moves whenever
 * another connection commits, and the cache is dropped when it has. It is asked once per
 * event-loop turn (see `fresh`), so a key revoked by `case-read keys revoke` stops working
 * on the very next request, while a steady stream of requests costs one cheap pragma per
 * turn instead of three lookups per request.
 */
export class SqliteAccessDirectory implements AccessDirectory {
  protected readonly reads;
  private version = Number.NaN;
  private readonly cache = new AccessCache();

  /**
   * The connection that records presented certificates and renewal claims, opened when
   * first needed (see `noteWriter`).
   */
  private notes: SqlDatabase | undefined;

  protected constructor(
    protected readonly db: SqlDatabase,
    private readonly path?: string,
    private readonly driver?: SqliteDriver,
  ) {
    this.reads = {
      client: db.prepare<[string], SqliteClientRow>('SELECT * FROM clients WHERE id = ?'),
      key: db.prepare<[string], SqliteKeyRow>('SELECT * FROM api_keys WHERE id = ?'),
      revoked: db.prepare<[string, string], { found: 1 }>(
        "SELECT 1 AS found FROM certificate_revocations WHERE serial_number = ? AND client_id IN ('', ?) LIMIT 1",
      ),
      grants: db.prepare<[string], { permission: string }>(
        'SELECT permission FROM user_grants WHERE email = ? ORDER BY permission',
      ),
      dataVersion: db.prepare<[], { data_version: number }>('PRAGMA data_version'),
    };
  }

  /** Opens a store for reading only; it must exist and be at the current schema version. */
  static openReadOnly(path: string, driver?: SqliteDriver): SqliteAccessDirectory {
    return new SqliteAccessDirectory(openReadOnlyStore(path, ACCESS_STORE, driver), path, driver);
  }

  /**
   * The writes the request path makes: `serve` reads this store read-only, and records what
   * a client presented, and the renewal of a certificate, through a connection of its own,
   * opened the first time (the store is at this version, or the read-only open would have
   * refused it).
   */
  protected noteWriter(): SqlDatabase {
    if (this.path === undefined)
      throw new AccessStoreError('access store: no file to record certificates in');
    this.notes ??= openWritableStore(this.path, ACCESS_STORE, this.driver);
    return this.notes;
  }

  async noteCertificate(seen: CertificateSeen): Promise<void> {
    this.noteWriter()
      .prepare(noteCertificateSql(() => '?'))
      .run(...ROWS.certificateSeenValues(seen));
  }

  /**
   * One statement under SQLite's write lock, so a claim is atomic across connections and
   * processes. A failure (a locked or read-only file) is a `StoreUnavailableError` (503).
   * No cached answer depends on a claim, so it counts in no `localWrites`.
   */
  async claimRenewal(claim: RenewalClaim): Promise<boolean> {
    return reading(
      'access store',
      () =>
        this.noteWriter()
          .prepare(claimRenewalSql(() => '?'))
          .run(...ROWS.renewalClaimValues(claim)).changes > 0,
    );
  }

  async completeRenewal(serialNumber: string, issuedSerialNumber: string | null): Promise<void> {
    reading('access store', () => {
      const writer = this.noteWriter();
      if (issuedSerialNumber === null) writer.prepare(releaseRenewalSql(() => '?')).run(serialNumber);
      else writer.prepare(completeRenewalSql(() => '?')).run(issuedSerialNumber, serialNumber);
    });
  }

  /** True while this event-loop turn has already asked SQLite for `data_version`… */
  private checkedThisTurn = false;
  /** …and no connection of this process has written since. */
  private checkedAtWrites = -1;

  /**
   * Drops every cached answer when anything has been committed since the last check. The
   * check is made once per event-loop turn, not once per lookup: the lookups of the
   * requests handled in one turn share it, and the first lookup of any later turn (so of
   * any request that arrives after a revocation is committed) makes a new one. A write
   * through any connection of this process forces a new check at once.
   */
  private fresh(): void {
    if (this.checkedThisTurn && this.checkedAtWrites === localWrites.count) return;
    this.checkedThisTurn = true;
    this.checkedAtWrites = localWrites.count;
    setImmediate(() => {
      this.checkedThisTurn = false;
    });
    const version = this.reads.dataVersion.get()?.data_version ?? 0;
    if (version === this.version) return;
    this.version = version;
    this.cache.clear();
  }

  close(): void {
    this.notes?.close();
    this.db.close();
  }

  /** For readiness: throws when the store cannot be read. */
  ping(): void {
    this.reads.dataVersion.get();
    this.db.prepare('SELECT 1 FROM clients LIMIT 1').get();
  }

  /** A cached read: the cache's answer, else `load`'s (kept when it found something). */
  private async lookup<V>(
    cache: Map<string, V>,
    key: string,
    load: () => V | undefined,
  ): Promise<V | undefined> {
    return reading('access store', () => {
      this.fresh();
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const value = load();
      return value === undefined ? undefined : AccessCache.remember(cache, key, value);
    });
  }

  heldAdmission(keyId: string, clientId: string, serialNumber: string): HeldAdmission | undefined {
    return reading('access store', () => {
      this.fresh();
      return this.cache.admission(keyId, clientId, serialNumber);
    });
  }

  findClient(id: string): Promise<Client | undefined> {
    return this.lookup(this.cache.clients, id, () => {
      const row = this.reads.client.get(id);
      return row && ROWS.toClient(row);
    });
  }

  findApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.lookup(this.cache.keys, id, () => {
      const row = this.reads.key.get(id);
      return row && ROWS.toKey(row);
    });
  }

  async isCertificateRevoked(serialNumber: string, clientId: string): Promise<boolean> {
    const key = AccessCache.revocationKey(serialNumber, clientId);
    const revoked = await this.lookup(
      this.cache.revoked,
      key,
      () => this.reads.revoked.get(serialNumber, clientId) !== undefined,
    );
    return revoked === true;
  }

  async grantsFor(email: string): Promise<readonly Permission[]> {
    const key = email.toLowerCase();
    const grants = await this.lookup(this.cache.grants, key, () =>
      this.reads.grants
        .all(key)
        .map((r) => r.permission)
        .filter(isPermission),
    );
    return grants ?? [];
  }
}
