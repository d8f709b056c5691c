// The AuditLog port over a SQLite audit store: appends linked onto the chain in group commits,
// the tree, checkpoints and their cosignatures, and the reads, in one file the processes of
// one machine may share.
import type { AuditVerification } from '../../domain/audit/chain-walker.js';
import type { AuditCheckpoint, ChainHead, CheckpointSet } from '../../domain/audit/checkpoint.js';
import type { AuditQuery, AuditRecord, StoredAuditRecord } from '../../domain/audit/record.js';
import type { ArchiveLock, ArchiveLockHolder, AuditLog, Forgotten, TreeHead } from '../../ports/audit-log.js';
import type { Deadline } from '../../ports/deadline.js';
import { StoreError } from '../../ports/stores.js';
import type { Hash } from '../../tlog/merkle.js';
import * as byCrn from '../shared/audit-by-crn.js';
import * as chain from '../shared/audit-chain.js';
import * as retention from '../shared/audit-retention.js';
import * as tree from '../shared/audit-tree.js';
import * as witnesses from '../shared/audit-witnesses.js';
import { GroupCommit } from '../shared/group-commit.js';
import { takeArchiveLease } from './archive-lease.js';
import { whenNotBusy, writeWhenFree } from './audit-busy.js';
import { forgetArchived } from './audit-forget.js';
import { AUDIT_STORE } from './audit-schema.js';
import { openWritableStore, transaction } from './database.js';
import { BUSY_TIMEOUT_MS, type SqlDatabase, type SqliteDriver, type SqlStatement } from './driver.js';

// The store's schema, in a module of its own, named here as before.
export { AUDIT_STORE } from './audit-schema.js';

/** How long readiness lets the write lock be held by another writer before it says so. */
const PING_WITHIN_MS = 500;

/**
 * The audit trail in a SQLite file (`AUDIT_STORE=sqlite:PATH`).
 *
 * Group commit: records appended in the same event-loop turn are written in one
 * transaction at the end of the turn, and each `append` resolves only once its record is
 * committed, so the service still answers nothing before it is recorded. Under load one
 * commit carries many records instead of each request paying for its own. WAL with
 * synchronous=NORMAL: a commit survives the process dying; an operating-system crash can
 * lose the last moments.
 *
 * Several processes on one machine may share the file: each batch takes SQLite's write lock
 * (BEGIN IMMEDIATE) and reads the chain head inside that transaction, so a writer that was
 * not first links onto the other's last record instead of colliding with it. (Across
 * machines use PostgreSQL: a SQLite file is not to be shared over a network file system.)
 */
export class SqliteAuditLog implements AuditLog {
  private readonly commits: GroupCommit<AuditRecord>;
  private readonly headRow: SqlStatement<[], ChainHead>;
  private readonly archivedRow: SqlStatement<[], retention.ArchivedRow>;
  private readonly headAtRow: SqlStatement<[number, number], ChainHead>;
  private readonly newestRow: SqlStatement<[], chain.CheckpointRow>;
  private readonly insertCheckpoint: SqlStatement<unknown[]>;
  private readonly treeSizeRow: SqlStatement<[], { size: number }>;
  private readonly treeHashRows: SqlStatement<[string], tree.TreeRow>;
  private readonly versionPage: SqlStatement<[number, number], chain.AuditRow>;
  /** The leaf rows of the records this connection wrote since the tree last grew: read from here, not the file. */
  private readonly written = new tree.WrittenLeaves();

  private constructor(
    private readonly db: SqlDatabase,
    /** The file, to say its size on disk; none for a database in memory. */
    private readonly path?: string,
  ) {
    const insert = db.prepare<unknown[]>(
      `INSERT INTO audit (${chain.AUDIT_COLUMNS.join(', ')}) VALUES (${chain.AUDIT_COLUMNS.map(() => '?').join(', ')})`,
    );
    this.headRow = db.prepare<[], ChainHead>('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1');
    this.archivedRow = db.prepare<[], retention.ArchivedRow>(retention.ARCHIVED_HEAD_SQL);
    this.headAtRow = db.prepare<[number, number], ChainHead>(retention.headAtSql(() => '?'));
    this.newestRow = db.prepare<[], chain.CheckpointRow>(chain.NEWEST_CHECKPOINT_SQL);
    this.insertCheckpoint = db.prepare<unknown[]>(chain.saveCheckpointSql(() => '?'));
    this.treeSizeRow = db.prepare<[], { size: number }>(tree.TREE_SIZE_SQL);
    this.treeHashRows = db.prepare<[string], tree.TreeRow>(tree.treeHashesSql.sqlite);
    this.versionPage = db.prepare<[number, number], chain.AuditRow>(chain.verifyPageSql(() => '?'));
    // IMMEDIATE: the write lock is taken before the head is read, so no other writer can
    // append between the read and the inserts.
    const writeNow = (batch: readonly AuditRecord[]) => {
      const linked = transaction(
        db,
        () => {
          const stored = chain.linkRecords(batch, this.headNow()).stored;
          for (const record of stored) insert.run(...chain.rowValuesOf(record));
          return stored;
        },
        'immediate',
      );
      // Committed: the tree may grow over them from here.
      this.written.add(linked);
    };
    // This connection never waits inside SQLite for another writer's lock: that wait would
    // hold the whole event loop, every other request and readiness with it. It asks again
    // a moment later instead, until the batch's deadline (or the busy timeout).
    db.exec('PRAGMA busy_timeout = 0');
    this.commits = new GroupCommit((batch, until) =>
      whenNotBusy(() => writeNow(batch), until ?? performance.now() + BUSY_TIMEOUT_MS, until !== undefined),
    );
  }

  static open(path: string, driver?: SqliteDriver): SqliteAuditLog {
    return new SqliteAuditLog(openWritableStore(path, AUDIT_STORE, driver), path);
  }

  /** The newest record, else the last one let go of (every held record archived), else the empty chain. */
  private headNow(): ChainHead {
    return this.headRow.get() ?? retention.archivedHeadOf(this.archivedRow.get()) ?? chain.EMPTY_CHAIN;
  }

  append(record: AuditRecord, deadline?: Deadline): Promise<void> {
    return this.commits.append(record, deadline);
  }

  flush(): Promise<void> {
    return this.commits.drain();
  }

  async head(): Promise<ChainHead> {
    return this.headNow();
  }

  async saveCheckpoint(checkpoint: AuditCheckpoint): Promise<void> {
    this.insertCheckpoint.run(...chain.checkpointValuesOf(checkpoint));
    if (checkpoint.cosignatures?.length) await this.addCosignatures(checkpoint, checkpoint.cosignatures);
  }

  /**
   * Reads the checkpoint's cosignatures and writes them merged with `lines` in one write
   * transaction (BEGIN IMMEDIATE: another process adding lines at once waits, then merges
   * with what this one wrote), asking again while another writer holds the lock.
   */
  async addCosignatures(checkpoint: AuditCheckpoint, lines: readonly string[]): Promise<void> {
    const read = this.db.prepare<[number, string, string], { cosignatures: string | null }>(
      witnesses.cosignaturesRowSql(() => '?'),
    );
    const write = this.db.prepare<[string, number, string, string]>(witnesses.setCosignaturesSql(() => '?'));
    const key = witnesses.checkpointKeyOf(checkpoint);
    await writeWhenFree(() =>
      transaction(
        this.db,
        () => {
          const merged = witnesses.mergedCosignaturesText(
            checkpoint,
            read.get(...key),
            lines,
            (message) => new StoreError(message),
          );
          if (merged !== undefined) write.run(merged, ...key);
        },
        'immediate',
      ),
    );
  }

  async witnessSizes(): Promise<ReadonlyMap<string, number>> {
    return witnesses.witnessSizesOfRows(
      this.db.prepare<[], witnesses.WitnessSizeRow>(witnesses.WITNESS_SIZES_SQL).all(),
    );
  }

  async saveWitnessSize(vkey: string, size: number): Promise<void> {
    const problem = witnesses.witnessSizeProblem(vkey, size);
    if (problem !== undefined) throw new StoreError(problem);
    const save = this.db.prepare<[string, number, string]>(witnesses.saveWitnessSizeSql(() => '?'));
    await writeWhenFree(() => save.run(vkey, size, new Date().toISOString()));
  }

  async newestCheckpoint(options?: { readonly withNote?: boolean }): Promise<AuditCheckpoint | undefined> {
    return chain.newestCheckpointOf(
      options?.withNote
        ? this.db.prepare<[], chain.CheckpointRow>(chain.NEWEST_NOTED_CHECKPOINT_SQL).get()
        : this.newestRow.get(),
    );
  }

  checkpoints(): AsyncIterable<AuditCheckpoint | { readonly invalid: string }> {
    const page = this.db.prepare<[number, string, string, number], chain.CheckpointRow>(
      chain.checkpointPageSql(() => '?'),
    );
    return chain.checkpointsByPages(async (after, limit) => page.all(...after, limit));
  }

  /**
   * Grows the tree a step ({@link tree.TREE_STEP} records) per transaction, each under the
   * write lock (so two processes never grow it at once), the event loop let through between.
   * Each step is {@link tree.growStepSync} over this file's reads and writes: the leaf rows of
   * the records this connection wrote are taken from memory, the others read from the file.
   */
  async growTree(): Promise<TreeHead> {
    const insertRow = this.db.prepare<unknown[]>(tree.insertTreeRowSql(() => '?'));
    const leafRows = this.db.prepare<[number], tree.LeafRow>(tree.leafRowsAfterSql(() => '?'));
    const olderRows = this.db.prepare<[number, number], chain.AuditRow>(tree.olderRecordsSql(() => '?'));
    const io: tree.SyncTreeIo = {
      treeSize: () => this.treeSizeRow.get()?.size ?? 0,
      readHashes: (indexes) => this.hashesNow(indexes),
      leafRowsAfter: (size) =>
        this.written.take(size, Math.min(this.headNow().seq, size + tree.TREE_STEP)) ?? leafRows.all(size),
      olderRecords: (after, to) => olderRows.all(after, to).map(chain.recordOfRow),
      headAt: (size) =>
        size === 0 ? chain.EMPTY_CHAIN : (this.headAtRow.get(size, size) ?? chain.EMPTY_CHAIN),
      writeHashes: (row) => {
        insertRow.run(row.idx, row.size, row.hashes);
      },
    };
    for (;;) {
      const grown = await writeWhenFree(() => transaction(this.db, () => tree.growStepSync(io), 'immediate'));
      if (grown !== undefined) return grown;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private hashesNow(indexes: readonly number[]): Map<number, Hash> {
    return tree.hashesOfRows(this.treeHashRows.all(JSON.stringify(indexes)), indexes);
  }

  async treeSize(): Promise<number> {
    return this.treeSizeRow.get()?.size ?? 0;
  }

  async treeHashes(indexes: readonly number[]): Promise<Map<number, Hash>> {
    return this.hashesNow(indexes);
  }

  recordsFrom(from: number, limit?: number): AsyncIterable<readonly StoredAuditRecord[]> {
    return chain.recordsByPages((after, page) => this.versionPage.all(after, page), from, limit);
  }

  recordsNaming(crn: string, window?: byCrn.TimeWindow): AsyncIterable<readonly StoredAuditRecord[]> {
    return byCrn.recordsNamingSql(crn, window, byCrn.SQLITE_CRN, (text, values) =>
      this.db.prepare(text).all(...values),
    );
  }

  /** Through their own index (few: one per loss), those kept below the archived boundary too. */
  async continuations(): Promise<readonly StoredAuditRecord[]> {
    return this.db.prepare<[], chain.AuditRow>(chain.CONTINUATIONS_SQL).all().map(chain.recordOfRow);
  }

  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    const { text, values } = chain.auditQuerySql(filter, () => '?');
    return this.db
      .prepare<unknown[], chain.AuditRow>(text)
      .all(...values)
      .map(chain.recordOfRow);
  }

  /** Walks the chain a page at a time, by sequence number, from the archived boundary on. */
  async verify(checkpoints?: CheckpointSet): Promise<AuditVerification> {
    const page = this.db.prepare<[number, number], chain.AuditRow>(chain.verifyPageSql(() => '?'));
    const from = await retention.archivedStartOf(
      retention.archivedHeadOf(this.archivedRow.get()),
      checkpoints?.hasRoots ?? false,
      async (indexes) => this.hashesNow(indexes),
    );
    return chain.verifyByPages((after, limit) => page.all(after, limit), checkpoints, from);
  }

  readonly archives = true;

  /** The archive lock: a lease row in the store ({@link takeArchiveLease}). */
  lockArchive(who: string): Promise<{ readonly held: ArchiveLock } | { readonly busy: ArchiveLockHolder }> {
    return takeArchiveLease(this.db, who, writeWhenFree);
  }

  async archivedHead(): Promise<ChainHead> {
    return retention.archivedHeadOf(this.archivedRow.get()) ?? chain.EMPTY_CHAIN;
  }

  /** Lets go of archived records ({@link forgetArchived}), reading the trail through this log. */
  async forget(asked: number): Promise<Forgotten> {
    return forgetArchived(this.db, this.path, asked, {
      treeSize: () => this.treeSize(),
      headSeq: () => this.headNow().seq,
      boundary: async () => (await this.archivedHead()).seq,
      headAt: (seq) => this.headAtRow.get(seq, seq),
      hashes: (indexes) => this.hashesNow(indexes),
    });
  }

  /** For readiness: throws when the store cannot be written (a write lock can be taken soon). */
  async ping(): Promise<void> {
    await whenNotBusy(
      () => this.db.exec('BEGIN IMMEDIATE; ROLLBACK'),
      performance.now() + PING_WITHIN_MS,
      false,
    );
  }

  /** Writes anything still pending, then closes. */
  close(): void {
    this.commits.flushNow();
    this.db.close();
  }
}
