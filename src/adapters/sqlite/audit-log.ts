import { statSync } from 'node:fs';
import type { AuditVerification } from '../../domain/audit/chain-walker.js';
import type { AuditCheckpoint, ChainHead, CheckpointSet } from '../../domain/audit/checkpoint.js';
import type { AuditQuery, AuditRecord, StoredAuditRecord } from '../../domain/audit/record.js';
import type { ArchiveLock, ArchiveLockHolder, AuditLog, Forgotten, TreeHead } from '../../ports/audit-log.js';
import { type Deadline, DeadlineExceededError } from '../../ports/deadline.js';
import { StoreError } from '../../ports/stores.js';
import type { Hash } from '../../tlog/merkle.js';
import * as byCrn from '../shared/audit-by-crn.js';
import * as chain from '../shared/audit-chain.js';
import * as retention from '../shared/audit-retention.js';
import * as tree from '../shared/audit-tree.js';
import * as witnesses from '../shared/audit-witnesses.js';
import { GroupCommit } from '../shared/group-commit.js';
import { archiveLeaseSql, takeArchiveLease } from './archive-lease.js';
import { openWritableStore, type StoreDescription, transaction } from './database.js';
import {
  BUSY_TIMEOUT_MS,
  type SqlDatabase,
  type SqliteDriver,
  type SqlStatement,
  sqliteErrorCode,
} from './driver.js';

/** Times as ISO 8601 text, which sorts as time does. */
const MIGRATIONS: readonly string[] = [
  chain.auditTableSql({ seq: 'INTEGER', at: 'TEXT' }),
  chain.auditVersion2Sql,
  chain.auditCheckpointsSql({ seq: 'INTEGER' }),
  chain.auditVersion3Sql,
  tree.auditTreeSql({ seq: 'INTEGER', bytes: 'BLOB' }),
  retention.auditArchivedSql({ seq: 'INTEGER', bytes: 'BLOB' }),
  archiveLeaseSql,
  witnesses.auditWitnessesSql({ size: 'INTEGER' }),
];

export class AuditStoreError extends StoreError {
  override readonly name = 'AuditStoreError';
}

/** How long readiness lets the write lock be held by another writer before it says so. */
const PING_WITHIN_MS = 500;
/** How soon a write held by another writer's lock is tried again. */
const BUSY_RETRY_MS = 10;

/**
 * Runs `work`, a synchronous write; while SQLite answers SQLITE_BUSY (another writer holds the
 * lock), again every {@link BUSY_RETRY_MS} until `until` (`performance.now()` ms), never
 * blocking the event loop in between and never beginning after `until`. Then: a
 * DeadlineExceededError when `until` was a request's deadline, the busy error otherwise.
 */
function whenNotBusy(work: () => void, until: number, isDeadline: boolean): void | Promise<void> {
  const attempt = (): boolean => {
    if (performance.now() >= until) {
      throw isDeadline
        ? new DeadlineExceededError('audit store')
        : new AuditStoreError('the audit store is locked by another writer');
    }
    try {
      work();
      return true;
    } catch (error) {
      if (sqliteErrorCode(error) !== 'SQLITE_BUSY') throw error;
      return false;
    }
  };
  if (attempt()) return;
  return (async () => {
    do {
      await new Promise((resolve) => setTimeout(resolve, Math.min(BUSY_RETRY_MS, until - performance.now())));
    } while (!attempt());
  })();
}

export const AUDIT_STORE: StoreDescription = {
  what: 'audit store',
  migrations: MIGRATIONS,
  usableFrom: 4,
  createHint: 'case-read serve (it creates the audit store)',
  error: (message) => new AuditStoreError(message),
  // Pages freed by letting go of archived records go back to the disk (decisions §15).
  incrementalVacuum: true,
};

/** Pages given back to the disk per step of incremental vacuum (4 MiB at 4 KiB a page). */
const VACUUM_STEP_PAGES = 1024;

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
    await this.writeWhenFree(() =>
      transaction(
        this.db,
        () => {
          const merged = witnesses.mergedCosignaturesText(
            checkpoint,
            read.get(...key),
            lines,
            (message) => new AuditStoreError(message),
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
    if (problem !== undefined) throw new AuditStoreError(problem);
    const save = this.db.prepare<[string, number, string]>(witnesses.saveWitnessSizeSql(() => '?'));
    await this.writeWhenFree(() => save.run(vkey, size, new Date().toISOString()));
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
      let grown: TreeHead | undefined;
      await whenNotBusy(
        () => {
          grown = transaction(this.db, () => tree.growStepSync(io), 'immediate');
        },
        performance.now() + BUSY_TIMEOUT_MS,
        false,
      );
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

  /** A write (synchronous) run once no other writer holds the lock: asked again while one does, as an append is. */
  private readonly writeWhenFree = async <T>(work: () => T): Promise<T> => {
    let done: T | undefined;
    await whenNotBusy(
      () => {
        done = work();
      },
      performance.now() + BUSY_TIMEOUT_MS,
      false,
    );
    return done as T;
  };

  /** The archive lock: a lease row in the store ({@link takeArchiveLease}). */
  lockArchive(who: string): Promise<{ readonly held: ArchiveLock } | { readonly busy: ArchiveLockHolder }> {
    return takeArchiveLease(this.db, who, this.writeWhenFree);
  }

  async archivedHead(): Promise<ChainHead> {
    return retention.archivedHeadOf(this.archivedRow.get()) ?? chain.EMPTY_CHAIN;
  }

  /**
   * Lets go of archived records ({@link retention.forgetWith}): each write takes the write
   * lock briefly, as an append does, and asks again while another writer holds it. The freed
   * pages go back to the disk by incremental vacuum, a step at a time, when the file was made
   * with it (audit stores created from version 6 are); an older file reuses them instead, and
   * stops growing.
   */
  async forget(asked: number): Promise<Forgotten> {
    const insert = this.db.prepare<[number, string, string]>(retention.insertArchivedSql(() => '?'));
    const remove = this.db.prepare<[number, number]>(retention.forgetBatchSql(() => '?'));
    const held = this.db.prepare<[], { seq: number | null }>(retention.HELD_FROM_SQL);
    const write = this.writeWhenFree;
    return retention.forgetWith(
      {
        treeSize: () => this.treeSize(),
        headSeq: async () => this.headNow().seq,
        boundary: async () => (await this.archivedHead()).seq,
        recordBoundary: (upTo) =>
          write(() => {
            const last = this.headAtRow.get(upTo, upTo);
            if (last !== undefined) insert.run(upTo, last.hash, new Date().toISOString());
            return last !== undefined;
          }),
        heldFrom: async () => held.get()?.seq ?? undefined,
        deleteBatch: (lo, hi) => write(() => remove.run(lo, hi).changes),
        trimTreeStep: (upTo) => write(() => transaction(this.db, () => this.trimTreeNow(upTo), 'immediate')),
        giveSpaceBack: () => this.giveSpaceBack(),
        bytes: async () => this.bytesOnDisk(),
      },
      asked,
      (message) => new AuditStoreError(message),
    );
  }

  /**
   * Lets a step of the tree's rows over the archived range go, keeping the hashes of 256
   * leaves and more (in the write transaction); how many rows went.
   */
  private trimTreeNow(upTo: number): number {
    const rows = this.db
      .prepare<[number], retention.TreeRowPlace>(retention.trimmableRowsSql(() => '?'))
      .all(upTo);
    const span = retention.leavesOfRows(rows);
    if (span === undefined) return 0;
    const indexes = retention.keptIndexes(span.from, span.to);
    const found = this.hashesNow(indexes);
    const insert = this.db.prepare<[number, Uint8Array]>(retention.insertKeptSql(() => '?'));
    for (const i of indexes) insert.run(i, found.get(i) as Hash);
    this.db.prepare<[number]>(retention.deleteTreeRowsSql(() => '?')).run(span.lastIdx);
    return rows.length;
  }

  private async giveSpaceBack(): Promise<void> {
    const mode = this.db.prepare<[], { auto_vacuum: number }>('PRAGMA auto_vacuum').get()?.auto_vacuum;
    if (mode !== 2) return;
    const free = this.db.prepare<[], { freelist_count: number }>('PRAGMA freelist_count');
    while ((free.get()?.freelist_count ?? 0) > 0) {
      await whenNotBusy(
        () => this.db.exec(`PRAGMA incremental_vacuum(${VACUUM_STEP_PAGES})`),
        performance.now() + BUSY_TIMEOUT_MS,
        false,
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The file shrinks when the WAL is checkpointed; a reader in the way leaves it to the next one.
    this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  }

  /** The file and its WAL, in bytes; undefined in memory. */
  private bytesOnDisk(): number | undefined {
    if (this.path === undefined || this.path === ':memory:') return undefined;
    const size = (file: string) => {
      try {
        return statSync(file).size;
      } catch {
        return 0;
      }
    };
    return size(this.path) + size(`${this.path}-wal`);
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
