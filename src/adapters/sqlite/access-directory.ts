import type {
  AccessDirectory,
  CertificateSeen,
  HeldAdmission,
  RenewalClaim,
} from '../../ports/access-directory.js';
import { StoreError } from '../../ports/stores.js';
import { AccessCache } from '../shared/access-cache.js';
import {
  type AccessWrite,
  accessReadsSql,
  accessWrites,
  CachedAccessReads,
  type CachedRead,
} from '../shared/access-requests.js';
import { ACCESS_STORE, localWrites, ROWS, type SqliteClientRow, type SqliteKeyRow } from './access-schema.js';
import { openReadOnlyStore, openWritableStore, reading } from './database.js';
import type { SqlDatabase, SqliteDriver, SqlStatement } from './driver.js';

const READS = accessReadsSql(() => '?');
const WRITES = accessWrites(() => '?', ROWS);

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
export class SqliteAccessDirectory
  extends CachedAccessReads<SqliteClientRow, SqliteKeyRow>
  implements AccessDirectory
{
  protected readonly reads;
  private version = Number.NaN;

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
    super(ROWS);
    this.reads = {
      client: db.prepare<[string], SqliteClientRow>(READS.client),
      key: db.prepare<[string], SqliteKeyRow>(READS.key),
      revoked: db.prepare<[string, string], { found: 1 }>(READS.revoked),
      grants: db.prepare<[string], { permission: string }>(READS.grants),
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
    if (this.path === undefined) throw new StoreError('access store: no file to record certificates in');
    this.notes ??= openWritableStore(this.path, ACCESS_STORE, this.driver);
    return this.notes;
  }

  async noteCertificate(seen: CertificateSeen): Promise<void> {
    this.runNote(WRITES.noteCertificate(seen));
  }

  /**
   * One statement under SQLite's write lock, so a claim is atomic across connections and
   * processes. A failure (a locked or read-only file) is a `StoreUnavailableError` (503).
   * No cached answer depends on a claim, so it counts in no `localWrites`.
   */
  async claimRenewal(claim: RenewalClaim): Promise<boolean> {
    return reading('access store', () => this.runNote(WRITES.claimRenewal(claim)) > 0);
  }

  async completeRenewal(serialNumber: string, issuedSerialNumber: string | null): Promise<void> {
    reading('access store', () => this.runNote(WRITES.completeRenewal(serialNumber, issuedSerialNumber)));
  }

  /** Runs a write of the request path through {@link noteWriter}; how many rows it changed. */
  private runNote(write: AccessWrite): number {
    return this.noteWriter()
      .prepare(write.text)
      .run(...write.values).changes;
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

  /** A cached read: the cache's answer, else the answer its rows make (kept when it found something). */
  protected async readThroughCache<R, V>(read: CachedRead<R, V>): Promise<V | undefined> {
    return reading('access store', () => {
      this.fresh();
      const cached = read.cache.get(read.key);
      if (cached !== undefined) return cached;
      const statement = this.reads[read.name] as SqlStatement<readonly unknown[], R>;
      const value = read.answer(statement.all(...read.values));
      return value === undefined ? undefined : AccessCache.remember(read.cache, read.key, value);
    });
  }

  heldAdmission(keyId: string, clientId: string, serialNumber: string): HeldAdmission | undefined {
    return reading('access store', () => {
      this.fresh();
      return this.cache.admission(keyId, clientId, serialNumber);
    });
  }
}
