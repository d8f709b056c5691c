import { auditLeafHash } from '../../domain/audit/canonical-text.js';
import type { ChainHead } from '../../domain/audit/checkpoint.js';
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import type { TreeHead } from '../../ports/audit-log.js';
import {
  appendLeaves,
  frontierIndexes,
  type Hash,
  MerkleError,
  rootOfFrontier,
  storedCount,
} from '../../tlog/merkle.js';
import { sha256Bytes } from './sha256.js';

/**
 * The audit trail's Merkle tree as the stores keep it (decisions §14, decision record 15):
 * every hash the tree stores (Go's `tlog` layout: a leaf, then each subtree it completes),
 * written once, never changed, in rows of consecutive hashes. A row says where its hashes
 * start (`idx`, the first one's stored index) and the tree's size once they are stored. The
 * tree follows the records: `serve` grows it before each checkpoint, off the request path,
 * so an append pays nothing for it; a checkpoint signs the root of what it has grown to.
 */

/** Records read, and leaves added, per step of growing: one row each, a short pause between. */
export const TREE_STEP = 1024;

/**
 * The tree's table (both SQL stores; only the integer and the bytes types differ), and the
 * signed note (C2SP tlog-checkpoint) beside each checkpoint. Audit store version 5. (No
 * index on the request id: random keys made every commit write a page per record, +25% CPU
 * per request; `audit prove REQUEST_ID` scans, `--seq` does not.)
 */
export const auditTreeSql = (types: { readonly seq: string; readonly bytes: string }) => `
  CREATE TABLE audit_tree (
    idx     ${types.seq} PRIMARY KEY,
    size    ${types.seq} NOT NULL UNIQUE,
    hashes  ${types.bytes} NOT NULL
  );
  ALTER TABLE audit_checkpoints ADD COLUMN note TEXT;
`;

/** How many leaves the stored tree holds: the size after its last row. */
export const TREE_SIZE_SQL = 'SELECT coalesce(max(size), 0) AS size FROM audit_tree';

/** One row of the tree table as a driver gives it (PostgreSQL's BIGINT as text). */
export interface TreeRow {
  readonly i: number | string;
  readonly hash: Uint8Array | null;
}

/** A record's leaf hash, by the record module's one rule, with SHA-256 over bytes. */
export const leafOf = (record: StoredAuditRecord): Hash => auditLeafHash(record, sha256Bytes);

/** The state the tree grows from: its size and its right edge (the hashes its root is made of). */
export interface TreeTip {
  readonly size: number;
  readonly frontier: readonly Hash[];
}

/** A record as the tree grows over it: its seq, its format, its stored hash. */
export interface LeafRow {
  readonly seq: number | string;
  readonly version: number;
  readonly hash: string;
  /** Its leaf hash, when the store made it already from the whole record (one written before format 4). */
  readonly leaf?: Hash;
}

/**
 * The leaves of `rows` (the next records, in order): a leaf the row carries; from format 4
 * each record's stored hash; a record written before has its leaf made from its text, found
 * in `older` (the rows of {@link olderRecordsSql}, read only when {@link needsOlder}).
 */
export function leavesOf(rows: readonly LeafRow[], older: readonly StoredAuditRecord[] = []): Hash[] {
  const bySeq = new Map(older.map((r) => [r.seq, r]));
  return rows.map((row) => {
    if (row.leaf !== undefined) return row.leaf;
    if (row.version >= 4) return Buffer.from(row.hash, 'hex');
    const record = bySeq.get(Number(row.seq));
    if (record === undefined)
      throw new MerkleError(`record ${row.seq} (format ${row.version}) was not read whole`);
    return leafOf(record);
  });
}

/**
 * The most leaf rows {@link WrittenLeaves} keeps (about 2 MiB): sixteen checkpoint intervals
 * at the default. Past it, what it kept is let go of and growing reads the store: a writer
 * whose tree is never grown here (no signing key, so no checkpoints) must not keep a row per
 * record for as long as it runs.
 */
export const MAX_WRITTEN_LEAVES = 16_384;

/**
 * The leaf rows of the records one writer stored since the tree last grew, kept so that the
 * tree grows over them without reading them back (the usual case: one writer). Only a run
 * of consecutive records, of at most {@link MAX_WRITTEN_LEAVES}, is kept: another writer's
 * records in between, or a run grown past the bound, start it again, and growing then reads
 * the store.
 */
export class WrittenLeaves {
  private rows: LeafRow[] = [];
  private first = 0;

  /** Notes a committed batch (consecutive records, in order). */
  add(batch: readonly StoredAuditRecord[]): void {
    const start = batch[0]?.seq;
    if (start === undefined) return;
    if (
      this.rows.length === 0 ||
      start !== this.first + this.rows.length ||
      this.rows.length + batch.length > MAX_WRITTEN_LEAVES
    ) {
      this.rows = [];
      this.first = start;
    }
    for (const r of batch) this.rows.push({ seq: r.seq, version: r.version, hash: r.hash });
  }

  /**
   * The rows of records `after` + 1 … `to` when all are held (and those up to `after` are let
   * go), else undefined. What is held is only what this writer committed.
   */
  take(after: number, to: number): LeafRow[] | undefined {
    const skip = after + 1 - this.first;
    if (skip < 0 || to <= after || to > this.first + this.rows.length - 1) return undefined;
    const taken = this.rows.slice(skip, skip + (to - after));
    this.rows = this.rows.slice(skip + taken.length);
    this.first = to + 1;
    return taken;
  }
}

/** Whether any of `rows` is a record written before format 4 whose text makes its leaf (none given). */
export const needsOlder = (rows: readonly LeafRow[]): boolean =>
  rows.some((row) => row.version < 4 && row.leaf === undefined);

/** One row of new hashes: where they start (the first one's stored index), the tree's size once stored, the hashes end to end. */
export interface GrownRow {
  readonly idx: number;
  readonly size: number;
  readonly hashes: Buffer;
}

/** The row that adding `rows`' leaves (the next records, in order) to the tree at `tip` stores, and the new tip. */
export function growBy(
  tip: TreeTip,
  rows: readonly LeafRow[],
  leaves: readonly Hash[],
): { readonly row: GrownRow; readonly tip: TreeTip } {
  rows.forEach((row, i) => {
    if (Number(row.seq) !== tip.size + i + 1) {
      throw new MerkleError(
        `the tree of ${tip.size + i} leaves cannot grow by record ${row.seq}: record ${tip.size + i + 1} is missing`,
      );
    }
  });
  const { stored, frontier } = appendLeaves(sha256Bytes, tip.size, tip.frontier, leaves);
  const size = tip.size + rows.length;
  return {
    row: { idx: storedCount(tip.size), size, hashes: Buffer.concat(stored) },
    tip: { size, frontier },
  };
}

/** Stored hashes read back by index, each checked to be one whole hash. */
export function hashesOfRows(rows: readonly TreeRow[], indexes: readonly number[]): Map<number, Hash> {
  const found = new Map<number, Hash>();
  for (const row of rows) {
    if (row.hash?.length === 32) found.set(Number(row.i), new Uint8Array(row.hash));
  }
  for (const i of indexes) {
    if (!found.has(i)) throw new MerkleError(`the stored tree lacks hash ${i}: it was cut short or changed`);
  }
  return found;
}

/** The tip of the stored tree of `size`, from its stored hashes (those of {@link frontierIndexes}(size) at least). */
export function tipFrom(size: number, found: ReadonlyMap<number, Hash>): TreeTip {
  return { size, frontier: frontierIndexes(size).map((i) => found.get(i) as Hash) };
}

/** What the tree of `tip` says to a checkpoint: its size, its root, and the chain's head at that size. */
export function treeHeadOf(tip: TreeTip, head: ChainHead): TreeHead {
  if (head.seq !== tip.size) {
    throw new MerkleError(`the tree holds ${tip.size} leaves but the record read as its last is ${head.seq}`);
  }
  return tip.size === 0
    ? { size: 0, head }
    : { size: tip.size, root: rootOfFrontier(sha256Bytes, tip.frontier), head };
}

/**
 * What a store gives growing the tree: its reads and writes, each answered inside the one
 * transaction (and under the lock) the store keeps for a step. A step asks them in this order:
 * `treeSize`, `readHashes` (the tree's frontier), `leafRowsAfter`; then `headAt` when there is
 * nothing to grow over, else `olderRecords` (only when a row needs it) and `writeHashes`.
 * A {@link SyncTreeIo} answers each at once (SQLite's driver, the JSONL writer's memory and
 * file), so a step runs through without a turn of the event loop; a `TreeIo` may answer with
 * promises (PostgreSQL's client).
 */
export interface TreeIo {
  /** The most rows `leafRowsAfter` gives at once ({@link TREE_STEP} unless said): fewer, and the tree has reached the chain's head. */
  readonly step?: number;
  /** How many leaves the stored tree holds. */
  treeSize(): number | PromiseLike<number>;
  /** Stored hashes by index, each checked whole ({@link hashesOfRows}). */
  readHashes(indexes: readonly number[]): ReadonlyMap<number, Hash> | PromiseLike<ReadonlyMap<number, Hash>>;
  /** The leaf rows of the records after `size`, in seq order, at most `step` of them. */
  leafRowsAfter(size: number): readonly LeafRow[] | PromiseLike<readonly LeafRow[]>;
  /** The whole records written before format 4 with `after` < seq ≤ `to`, whose text makes their leaves. */
  olderRecords(
    after: number,
    to: number,
  ): readonly StoredAuditRecord[] | PromiseLike<readonly StoredAuditRecord[]>;
  /** The chain's head at `size` (record `size`, or the boundary there, or the empty chain). */
  headAt(size: number): ChainHead | PromiseLike<ChainHead>;
  /** Stores one row of new hashes; `tip` is the tree's once it is stored. */
  writeHashes(row: GrownRow, tip: TreeTip): void | PromiseLike<void>;
}

/** The same reads and writes, each answered at once. */
export type SyncTreeIo = {
  [K in keyof TreeIo]: TreeIo[K] extends (...args: infer A) => infer R
    ? (...args: A) => Awaited<R>
    : TreeIo[K];
};

/** Hands a store's answer back to the step that asked (awaited by {@link growStep}, as it is by {@link growStepSync}). */
function* answer<T>(given: T | PromiseLike<T>): Generator<unknown, T, unknown> {
  return (yield given) as T;
}

/**
 * One step of growing the stored tree, written once for every store (Tessera's integrate):
 * from the stored size N over the next records, at most a step of them, to N + their count,
 * storing one row. Its reads and writes are yielded to the driver, which hands back what the
 * store answered. Returns the tree's head when it has grown to the chain's head, else
 * undefined (a step more is wanted).
 */
function* integrate(io: TreeIo): Generator<unknown, TreeHead | undefined, unknown> {
  const size = yield* answer(io.treeSize());
  const tip = tipFrom(size, yield* answer(io.readHashes(frontierIndexes(size))));
  const rows = yield* answer(io.leafRowsAfter(size));
  if (rows.length === 0) return treeHeadOf(tip, yield* answer(io.headAt(size)));
  const last = rows[rows.length - 1] as LeafRow;
  const older = needsOlder(rows) ? yield* answer(io.olderRecords(size, Number(last.seq))) : [];
  const next = growBy(tip, rows, leavesOf(rows, older));
  yield* answer(io.writeHashes(next.row, next.tip));
  return rows.length < (io.step ?? TREE_STEP)
    ? treeHeadOf(next.tip, { seq: Number(last.seq), hash: last.hash })
    : undefined;
}

const isPromise = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';

/**
 * {@link integrate} driven at once: for a store whose every read and write answers at once,
 * inside its own synchronous transaction (SQLite's). No promise, no turn of the event loop.
 */
export function growStepSync(io: SyncTreeIo): TreeHead | undefined {
  const steps = integrate(io);
  for (let asked = steps.next(); ; ) {
    if (asked.done) return asked.value;
    if (isPromise(asked.value)) throw new MerkleError('a synchronous store answered growing with a promise');
    asked = steps.next(asked.value);
  }
}

/** {@link integrate} driven by awaiting each answer: for a store that answers with promises (PostgreSQL's). */
export async function growStep(io: TreeIo): Promise<TreeHead | undefined> {
  const steps = integrate(io);
  for (let asked = steps.next(); ; ) {
    if (asked.done) return asked.value;
    asked = steps.next(await asked.value);
  }
}

/**
 * The SQL that reads stored hashes by index (the indexes as `$1`/`?`): each from the row that
 * holds it, the last row starting at or before it, else from the hashes kept of rows let go
 * of over archived records (audit store version 6). SQLite takes the indexes as a JSON array,
 * PostgreSQL as a BIGINT array.
 */
export const treeHashesSql = {
  sqlite: `SELECT j.value AS i,
             coalesce(
               (SELECT substr(t.hashes, (j.value - t.idx) * 32 + 1, 32) FROM audit_tree t
                 WHERE t.idx <= j.value ORDER BY t.idx DESC LIMIT 1),
               (SELECT k.hash FROM audit_tree_kept k WHERE k.idx = j.value)) AS hash
           FROM json_each(?) j`,
  postgres: `SELECT i,
               coalesce(
                 (SELECT substring(t.hashes FROM ((i - t.idx) * 32 + 1)::int FOR 32) FROM audit_tree t
                   WHERE t.idx <= i ORDER BY t.idx DESC LIMIT 1),
                 (SELECT k.hash FROM audit_tree_kept k WHERE k.idx = i)) AS hash
             FROM unnest($1::bigint[]) AS i`,
} as const;

/** The tree's insert, with the engine's placeholders. */
export const insertTreeRowSql = (placeholder: (n: number) => string) =>
  `INSERT INTO audit_tree (idx, size, hashes) VALUES (${placeholder(1)}, ${placeholder(2)}, ${placeholder(3)})`;

/** The records after the tree's size, at most {@link TREE_STEP}: seq, format and hash only. */
export const leafRowsAfterSql = (placeholder: (n: number) => string) =>
  `SELECT seq, version, hash FROM audit WHERE seq > ${placeholder(1)} ORDER BY seq LIMIT ${TREE_STEP}`;

/** The whole records written before format 4 in a range of seqs (`$1` < seq ≤ `$2`): their text makes their leaves. */
export const olderRecordsSql = (placeholder: (n: number) => string) =>
  `SELECT * FROM audit WHERE seq > ${placeholder(1)} AND seq <= ${placeholder(2)} AND version < 4 ORDER BY seq`;

/**
 * The largest tree size whose stored hashes number at most `count`: what a flat file of
 * stored hashes, perhaps cut off mid-write, holds whole.
 */
export function sizeOfStored(count: number): number {
  let size = Math.floor(count / 2);
  while (storedCount(size + 1) <= count) size++;
  while (size > 0 && storedCount(size) > count) size--;
  return size;
}
