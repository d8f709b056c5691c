import type pg from 'pg';
import { GENESIS_HASH } from '../../domain/audit/chain.js';
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
import { budgetLeftMs, GroupCommit, type WriteBudget } from '../shared/group-commit.js';
import { takeArchiveAdvisoryLock } from './archive-lock.js';
import { inTransaction, type PostgresStoreDescription } from './database.js';

export const AUDIT_STORE: PostgresStoreDescription = {
  what: 'audit store',
  createHint: 'case-read serve (it creates the audit store)',
  usableFrom: 4,
  migrations: [
    `${chain.auditTableSql({ seq: 'BIGINT', at: 'TIMESTAMPTZ' })}
    -- The chain head: one row, locked by each append transaction.
    CREATE TABLE audit_head (
      id    BOOLEAN PRIMARY KEY DEFAULT true CHECK (id),
      seq   BIGINT NOT NULL,
      hash  TEXT NOT NULL
    );
    INSERT INTO audit_head (seq, hash) VALUES (0, '${GENESIS_HASH}');
    `,
    chain.auditVersion2Sql,
    chain.auditCheckpointsSql({ seq: 'BIGINT' }),
    chain.auditVersion3Sql,
    tree.auditTreeSql({ seq: 'BIGINT', bytes: 'BYTEA' }),
    retention.auditArchivedSql({ seq: 'BIGINT', bytes: 'BYTEA' }),
    witnesses.auditWitnessesSql({ size: 'BIGINT' }),
    chain.auditContinuationSql,
  ],
};

/** How long growing the tree waits for another instance that is growing it: then it tries at the next checkpoint. */
const TREE_LOCK_TIMEOUT = '5s';

/** SQLSTATE of a statement cancelled by `statement_timeout`. */
const QUERY_CANCELED = '57014';

/** The head row as a chain head (its BIGINT comes as text). */
const headOf = (row: { seq: string; hash: string } | undefined): ChainHead =>
  row ? { seq: Number(row.seq), hash: row.hash } : chain.EMPTY_CHAIN;

/**
 * The audit trail in PostgreSQL: one chain, written by every instance.
 *
 * Each append transaction locks the chain head row (`SELECT … FOR UPDATE`), links its
 * records onto it, inserts them in one statement and moves the head, so appends from any
 * number of instances form one chain, serialised by the database: none is lost, none
 * forks, none is refused because another instance wrote first. Each instance keeps group
 * commit: while one transaction is in flight, the records appended meanwhile wait and go
 * together in the next, so the lock is taken once per batch, not once per request. An
 * `append` resolves only once its transaction has committed; if it cannot commit, every
 * append of the batch rejects and the service answers 503.
 */
export class PostgresAuditLog implements AuditLog {
  private readonly commits = new GroupCommit<AuditRecord>((batch, until) => this.write(batch, until));

  constructor(private readonly pool: pg.Pool) {}

  append(record: AuditRecord, deadline?: Deadline): Promise<void> {
    return this.commits.append(record, deadline);
  }

  flush(): Promise<void> {
    return this.commits.drain();
  }

  /** The head row: what every instance's appends have committed. */
  async head(): Promise<ChainHead> {
    const { rows } = await this.pool.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_head');
    return headOf(rows[0]);
  }

  async saveCheckpoint(checkpoint: AuditCheckpoint): Promise<void> {
    await this.pool.query(
      chain.saveCheckpointSql((n) => `$${n}`),
      chain.checkpointValuesOf(checkpoint),
    );
    if (checkpoint.cosignatures?.length) await this.addCosignatures(checkpoint, checkpoint.cosignatures);
  }

  /**
   * Reads the checkpoint's cosignatures under its row's lock (`FOR UPDATE`) and writes them
   * merged with `lines` in the same transaction: another instance adding lines at once waits
   * for the lock, then reads and merges what this one wrote, so no line is lost.
   */
  async addCosignatures(checkpoint: AuditCheckpoint, lines: readonly string[]): Promise<void> {
    const place = (n: number) => `$${n}`;
    const key = witnesses.checkpointKeyOf(checkpoint);
    await inTransaction(this.pool, {}, async (client) => {
      const { rows } = await client.query<{ cosignatures: string | null }>(
        `${witnesses.cosignaturesRowSql(place)} FOR UPDATE`,
        key,
      );
      const merged = witnesses.mergedCosignaturesText(
        checkpoint,
        rows[0],
        lines,
        (message) => new StoreError(message),
      );
      if (merged !== undefined) await client.query(witnesses.setCosignaturesSql(place), [merged, ...key]);
    });
  }

  async witnessSizes(): Promise<ReadonlyMap<string, number>> {
    const { rows } = await this.pool.query<witnesses.WitnessSizeRow>(witnesses.WITNESS_SIZES_SQL);
    return witnesses.witnessSizesOfRows(rows);
  }

  async saveWitnessSize(vkey: string, size: number): Promise<void> {
    const problem = witnesses.witnessSizeProblem(vkey, size);
    if (problem !== undefined) throw new StoreError(problem);
    await this.pool.query(
      witnesses.saveWitnessSizeSql((n) => `$${n}`),
      [vkey, size, new Date().toISOString()],
    );
  }

  async newestCheckpoint(options?: { readonly withNote?: boolean }): Promise<AuditCheckpoint | undefined> {
    const { rows } = await this.pool.query<chain.CheckpointRow>(
      options?.withNote ? chain.NEWEST_NOTED_CHECKPOINT_SQL : chain.NEWEST_CHECKPOINT_SQL,
    );
    return chain.newestCheckpointOf(rows[0]);
  }

  checkpoints(): AsyncIterable<AuditCheckpoint | { readonly invalid: string }> {
    const text = chain.checkpointPageSql((n) => `$${n}`);
    return chain.checkpointsByPages(
      async (after, limit) => (await this.pool.query<chain.CheckpointRow>(text, [...after, limit])).rows,
    );
  }

  /**
   * One transaction for the batch. Given `until` (the batch's earliest deadline), its
   * statements are cancelled by the server when it passes (`SET LOCAL statement_timeout`):
   * a batch held by a lock on the table is really stopped, not left to commit after its
   * requests were answered 503.
   */
  private async write(records: readonly AuditRecord[], until: WriteBudget): Promise<void> {
    try {
      await this.inTransactionUntil(records, until);
    } catch (error) {
      if (until !== undefined && (error as { code?: string }).code === QUERY_CANCELED) {
        throw new DeadlineExceededError('audit store');
      }
      throw error;
    }
  }

  private async inTransactionUntil(records: readonly AuditRecord[], until: WriteBudget): Promise<void> {
    await inTransaction(this.pool, { statementTimeoutMs: () => budgetLeftMs(until) }, async (client) => {
      const { rows } = await client.query<{ seq: string; hash: string }>(
        'SELECT seq, hash FROM audit_head FOR UPDATE',
      );
      const linked = chain.linkRecords(records, headOf(rows[0]));
      // One statement for the batch: each column as an array, unnested into rows.
      const columns: unknown[][] = chain.AUDIT_COLUMNS.map(() => []);
      for (const record of linked.stored) {
        chain.rowValuesOf(record).forEach((value, i) => {
          columns[i]?.push(value);
        });
      }
      await client.query(
        `INSERT INTO audit (${chain.AUDIT_COLUMNS.join(', ')})
         SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[],
                              $7::text[], $8::text[], $9::int[], $10::text[], $11::text[],
                              $12::int[], $13::text[], $14::text[], $15::text[], $16::text[])`,
        columns,
      );
      await client.query('UPDATE audit_head SET seq = $1, hash = $2', [linked.head.seq, linked.head.hash]);
    });
  }

  /**
   * Grows the tree a step ({@link tree.TREE_STEP} records) per transaction. Each takes the
   * tree table's lock (EXCLUSIVE: readers go on, a second instance growing it waits) and
   * reads the records after the tree's size: appends commit in seq order under the head
   * row's lock, so what it sees is a whole prefix of the chain. Each step is
   * {@link tree.growStep} over that transaction's reads and writes.
   */
  async growTree(): Promise<TreeHead> {
    const place = (n: number) => `$${n}`;
    for (;;) {
      const grown = await inTransaction(this.pool, {}, async (client) => {
        await client.query(
          `SET LOCAL lock_timeout = '${TREE_LOCK_TIMEOUT}'; LOCK TABLE audit_tree IN EXCLUSIVE MODE`,
        );
        return tree.growStep({
          treeSize: async () =>
            Number((await client.query<{ size: string }>(tree.TREE_SIZE_SQL)).rows[0]?.size ?? 0),
          readHashes: (indexes) => this.hashesBy(client, indexes),
          leafRowsAfter: async (size) =>
            (await client.query<tree.LeafRow>(tree.leafRowsAfterSql(place), [size])).rows,
          olderRecords: async (after, to) =>
            (await client.query<chain.AuditRow>(tree.olderRecordsSql(place), [after, to])).rows.map(
              chain.recordOfRow,
            ),
          headAt: async (size) =>
            headOf(
              (await client.query<{ seq: string; hash: string }>(retention.headAtSql(place), [size, size]))
                .rows[0],
            ),
          writeHashes: async (row) => {
            await client.query(tree.insertTreeRowSql(place), [row.idx, row.size, row.hashes]);
          },
        });
      });
      if (grown !== undefined) return grown;
    }
  }

  private async hashesBy(
    client: Pick<pg.Pool, 'query'>,
    indexes: readonly number[],
  ): Promise<Map<number, Hash>> {
    if (indexes.length === 0) return new Map();
    const { rows } = await client.query<tree.TreeRow>(tree.treeHashesSql.postgres, [indexes]);
    return tree.hashesOfRows(rows, indexes);
  }

  async treeSize(): Promise<number> {
    return Number((await this.pool.query<{ size: string }>(tree.TREE_SIZE_SQL)).rows[0]?.size ?? 0);
  }

  treeHashes(indexes: readonly number[]): Promise<Map<number, Hash>> {
    return this.hashesBy(this.pool, indexes);
  }

  recordsFrom(from: number, limit?: number): AsyncIterable<readonly StoredAuditRecord[]> {
    const text = chain.verifyPageSql((n) => `$${n}`);
    return chain.recordsByPages(
      async (after, page) => (await this.pool.query<chain.AuditRow>(text, [after, page])).rows,
      from,
      limit,
    );
  }

  recordsNaming(crn: string, window?: byCrn.TimeWindow): AsyncIterable<readonly StoredAuditRecord[]> {
    return byCrn.recordsNamingSql(
      crn,
      window,
      byCrn.POSTGRES_CRN,
      async (text, values) => (await this.pool.query(text, values)).rows,
    );
  }

  /** Through their own index (few: one per loss), those kept below the archived boundary too. */
  async continuations(): Promise<readonly StoredAuditRecord[]> {
    const { rows } = await this.pool.query<chain.AuditRow>(chain.CONTINUATIONS_SQL);
    return rows.map(chain.recordOfRow);
  }

  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    const { text, values } = chain.auditQuerySql(filter, (n) => `$${n}`);
    const { rows } = await this.pool.query<chain.AuditRow>(text, values);
    return rows.map(chain.recordOfRow);
  }

  /** Walks the chain a page at a time, by sequence number (keyset paging), from the archived boundary on. */
  async verify(checkpoints?: CheckpointSet): Promise<AuditVerification> {
    const text = chain.verifyPageSql((n) => `$${n}`);
    const from = await retention.archivedStartOf(
      await this.boundary(),
      checkpoints?.hasRoots ?? false,
      (indexes) => this.treeHashes(indexes),
    );
    return chain.verifyByPages(
      async (after, limit) =>
        (await this.pool.query<chain.AuditRow>({ name: 'audit-verify-page', text, values: [after, limit] }))
          .rows,
      checkpoints,
      from,
    );
  }

  private async boundary(): Promise<ChainHead | undefined> {
    const { rows } = await this.pool.query<retention.ArchivedRow>(retention.ARCHIVED_HEAD_SQL);
    return retention.archivedHeadOf(rows[0]);
  }

  readonly archives = true;

  async archivedHead(): Promise<ChainHead> {
    return (await this.boundary()) ?? chain.EMPTY_CHAIN;
  }

  /** The archive lock: an advisory lock keyed by the schema, on a connection of its own ({@link takeArchiveAdvisoryLock}). */
  lockArchive(who: string): Promise<{ readonly held: ArchiveLock } | { readonly busy: ArchiveLockHolder }> {
    return takeArchiveAdvisoryLock(this.pool, who);
  }

  /**
   * Lets go of archived records ({@link retention.forgetWith}): each statement its own
   * transaction (appends lock only the head row, so they go on beside it), then `VACUUM` of
   * both tables, which runs beside reads and writes: the freed space is reused by new
   * records, so the tables stop growing; a file shrinks only where freed pages are at its end.
   */
  async forget(asked: number): Promise<Forgotten> {
    const place = (n: number) => `$${n}`;
    return retention.forgetWith(
      {
        treeSize: () => this.treeSize(),
        headSeq: async () => (await this.head()).seq,
        boundary: async () => (await this.archivedHead()).seq,
        recordBoundary: async (upTo) => {
          const { rows } = await this.pool.query<{ seq: string; hash: string }>(retention.headAtSql(place), [
            upTo,
            upTo,
          ]);
          const last = rows[0];
          if (last === undefined) return false;
          await this.pool.query(retention.insertArchivedSql(place), [
            upTo,
            last.hash,
            new Date().toISOString(),
          ]);
          return true;
        },
        heldFrom: async () => {
          const seq = (await this.pool.query<{ seq: string | null }>(retention.HELD_FROM_SQL)).rows[0]?.seq;
          return seq == null ? undefined : Number(seq);
        },
        deleteBatch: async (lo, hi) =>
          (await this.pool.query(retention.forgetBatchSql(place), [lo, hi])).rowCount ?? 0,
        trimTreeStep: (upTo) => this.trimTreeStep(upTo),
        giveSpaceBack: async () => {
          await this.pool.query('VACUUM audit');
          await this.pool.query('VACUUM audit_tree');
        },
        bytes: () => this.tableBytes(),
      },
      asked,
      (message) => new StoreError(message),
    );
  }

  /**
   * One step of letting the tree's rows over the archived range go, keeping the hashes of
   * 256 leaves and more, under the tree table's lock (as growing it takes): how many rows went.
   */
  private async trimTreeStep(upTo: number): Promise<number> {
    return inTransaction(this.pool, {}, async (client) => {
      await client.query(
        `SET LOCAL lock_timeout = '${TREE_LOCK_TIMEOUT}'; LOCK TABLE audit_tree IN EXCLUSIVE MODE`,
      );
      const { rows } = await client.query<retention.TreeRowPlace>(
        retention.trimmableRowsSql((n) => `$${n}`),
        [upTo],
      );
      const span = retention.leavesOfRows(rows);
      if (span === undefined) return 0;
      const indexes = retention.keptIndexes(span.from, span.to);
      const found = await this.hashesBy(client, indexes);
      if (indexes.length > 0) {
        await client.query(
          `INSERT INTO audit_tree_kept (idx, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[]) ON CONFLICT (idx) DO NOTHING`,
          [indexes, indexes.map((i) => Buffer.from(found.get(i) as Hash))],
        );
      }
      await client.query(
        retention.deleteTreeRowsSql((n) => `$${n}`),
        [span.lastIdx],
      );
      return rows.length;
    });
  }

  /** The audit and tree tables with their indexes and TOAST, in bytes. */
  private async tableBytes(): Promise<number> {
    const { rows } = await this.pool.query<{ bytes: string }>(
      "SELECT pg_total_relation_size('audit') + pg_total_relation_size('audit_tree') AS bytes",
    );
    return Number(rows[0]?.bytes ?? 0);
  }

  /** For readiness: the head row can be read (and so locked) now. */
  async ping(): Promise<void> {
    await this.pool.query('SELECT seq FROM audit_head');
  }

  /** Waits for anything pending to be written. */
  async close(): Promise<void> {
    await this.commits.drain();
  }
}
