import type { ArchivedStart } from '../../domain/audit/chain.js';
import type { ChainHead } from '../../domain/audit/checkpoint.js';
import type { Forgotten } from '../../ports/audit-log.js';
import { frontierIndexes, type Hash, MerkleError, storedCount, storedIndexOf } from '../../tlog/merkle.js';

/**
 * Letting go of archived records (decisions §15), as both SQL stores do it ({@link forgetWith}):
 * the boundary is recorded first (the last record let go of, its seq and chain hash), then the
 * records up to it are deleted a batch per statement, each its own short transaction, so
 * appends wait at most one batch. Then the tree's rows over the archived range go too, a step
 * of rows per transaction, but for the hashes of subtrees of 256 leaves and more
 * ({@link keptIndexes}): proofs of newer records, and the walk from the boundary, go on from
 * those. A run stopped half-way leaves records below the boundary that nothing reads; the
 * next one removes them. A trail's continuation records (format 5, ADR 30) are never let go of:
 * they stay below the boundary, few, read by `continuations` (the walk from the boundary, and
 * the tree's, never reach them).
 */

/**
 * Audit store version 6: the boundary of each archive that was let go of, and the tree's
 * hashes kept of the archived range once its rows are let go of too (see {@link keptIndexes}).
 */
export const auditArchivedSql = (types: { readonly seq: string; readonly bytes: string }) => `
  CREATE TABLE audit_archived (
    seq          ${types.seq} PRIMARY KEY,
    hash         TEXT NOT NULL,
    archived_at  TEXT NOT NULL
  );
  CREATE TABLE audit_tree_kept (
    idx   ${types.seq} PRIMARY KEY,
    hash  ${types.bytes} NOT NULL
  );
`;

/** The highest boundary: where the held trail begins. */
export const ARCHIVED_HEAD_SQL = 'SELECT seq, hash FROM audit_archived ORDER BY seq DESC LIMIT 1';

/** Records a boundary; a second run at the same one records nothing. */
export const insertArchivedSql = (p: (n: number) => string) =>
  `INSERT INTO audit_archived (seq, hash, archived_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}) ON CONFLICT (seq) DO NOTHING`;

/** The chain head at one seq (given twice): the record if held, else the boundary if it is that one. */
export const headAtSql = (p: (n: number) => string) =>
  `SELECT seq, hash FROM audit WHERE seq = ${p(1)} UNION ALL SELECT seq, hash FROM audit_archived WHERE seq = ${p(2)} LIMIT 1`;

/**
 * The lowest record held that may be let go of (no row when none): continuation records, kept
 * below the boundary, are not where the next run starts.
 */
export const HELD_FROM_SQL = 'SELECT seq FROM audit WHERE continuation IS NULL ORDER BY seq LIMIT 1';

/** Records deleted per statement. */
export const FORGET_BATCH = 2_000;

/** Deletes the records in (`$1`, `$2`], but for continuation records, which stay. */
export const forgetBatchSql = (p: (n: number) => string) =>
  `DELETE FROM audit WHERE seq > ${p(1)} AND seq <= ${p(2)} AND continuation IS NULL`;

/** Tree rows let go of per transaction (each row up to {@link TREE_STEP} leaves' hashes, 64 KiB). */
export const TRIM_STEP_ROWS = 64;

/**
 * The tree's next rows over the archived range, which may go: whole rows below `$1` (whole
 * tiles), never the last row (whose size is the tree's), {@link TRIM_STEP_ROWS} at most.
 */
export const trimmableRowsSql = (p: (n: number) => string) =>
  `SELECT idx, size FROM audit_tree WHERE size <= ${p(1)} AND size < (SELECT max(size) FROM audit_tree) ORDER BY idx LIMIT ${TRIM_STEP_ROWS}`;

/** Deletes the rows read by {@link trimmableRowsSql}: the lowest rows, up to the last one's `idx` (`$1`). */
export const deleteTreeRowsSql = (p: (n: number) => string) => `DELETE FROM audit_tree WHERE idx <= ${p(1)}`;

export const insertKeptSql = (p: (n: number) => string) =>
  `INSERT INTO audit_tree_kept (idx, hash) VALUES (${p(1)}, ${p(2)}) ON CONFLICT (idx) DO NOTHING`;

/** The level at and above which the archived range's hashes are kept: one tile's height. */
const KEPT_FROM_LEVEL = 8;

/** Where the tree's rows may be let go of up to: the boundary rounded down to whole tiles of 256 leaves. */
const trimmableUpTo = (boundary: number): number =>
  Math.floor(boundary / 2 ** KEPT_FROM_LEVEL) * 2 ** KEPT_FROM_LEVEL;

/** The tree size whose stored hashes end at stored index `idx` (a row's start); throws when none does. */
export function sizeAtStored(idx: number): number {
  let lo = 0;
  let hi = idx;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (storedCount(mid) < idx) lo = mid + 1;
    else hi = mid;
  }
  if (storedCount(lo) !== idx) throw new MerkleError(`stored index ${idx} is not where a tree's hashes end`);
  return lo;
}

/**
 * The hashes kept when the rows over leaves `from` … `to` − 1 go (`to` at most the boundary
 * rounded down to whole tiles): those of the subtrees of 256 leaves and more completed there.
 * Any proof about a tree of `to` or more leaves, and the tree's right edge at `to`, is made of
 * these and of hashes after `to`: the smaller subtrees inside the archived range are only ever needed about a
 * tree that ends inside it, and those are proved from the archive's tiles.
 */
export function keptIndexes(from: number, to: number): number[] {
  const kept: number[] = [];
  for (let level = KEPT_FROM_LEVEL; 2 ** level <= to; level++) {
    const width = 2 ** level;
    // Subtrees whose last leaf, (k + 1)·2^level − 1, is in [from, to).
    for (let k = Math.max(0, Math.ceil((from + 1) / width) - 1); (k + 1) * width <= to; k++) {
      kept.push(storedIndexOf({ level, index: k }));
    }
  }
  return kept.sort((a, b) => a - b);
}

/** A tree row's place, as a driver gives it (PostgreSQL's BIGINT as text). */
export interface TreeRowPlace {
  readonly idx: number | string;
  readonly size: number | string;
}

/** The leaves the trimmable rows cover: [from, to). */
export function leavesOfRows(
  rows: readonly TreeRowPlace[],
): { from: number; to: number; lastIdx: number } | undefined {
  const first = rows[0];
  const last = rows.at(-1);
  if (first === undefined || last === undefined) return undefined;
  return { from: sizeAtStored(Number(first.idx)), to: Number(last.size), lastIdx: Number(last.idx) };
}

/** Why records up to `upTo` cannot be let go of now, or undefined when they can. */
function forgetRefusal(upTo: number, treeSize: number): string | undefined {
  if (!Number.isSafeInteger(upTo) || upTo < 1) return `${upTo} is not a record number`;
  if (upTo > treeSize) {
    return `records up to ${upTo} are not all in the stored tree (${treeSize} records): their hashes would be lost; let go only of what a checkpoint covers`;
  }
  return undefined;
}

/**
 * How far to let go when asked for `upTo`: never the newest record, so the chain's head is
 * always a held record (a previous release, which knows no boundary, links onto it).
 */
const forgetLimit = (upTo: number, headSeq: number): number => Math.min(upTo, headSeq - 1);

/** The batches (lo, hi] that delete every record from `heldFrom` up to `upTo`. */
function* forgetBatches(heldFrom: number, upTo: number): Generator<readonly [number, number]> {
  for (let lo = heldFrom - 1; lo < upTo; lo += FORGET_BATCH) yield [lo, Math.min(lo + FORGET_BATCH, upTo)];
}

/** A boundary row as a driver gives it (PostgreSQL's BIGINT as text). */
export interface ArchivedRow {
  readonly seq: number | string;
  readonly hash: string;
}

export const archivedHeadOf = (row: ArchivedRow | undefined): ChainHead | undefined =>
  row === undefined ? undefined : { seq: Number(row.seq), hash: row.hash };

/**
 * Where `verify` starts: after the boundary, with the tree's frontier there (only needed,
 * and only read, when signed roots are to be checked). Undefined when nothing was let go of.
 */
export async function archivedStartOf(
  boundary: ChainHead | undefined,
  withFrontier: boolean,
  treeHashes: (indexes: readonly number[]) => Promise<Map<number, Hash>>,
): Promise<ArchivedStart | undefined> {
  if (boundary === undefined || boundary.seq === 0) return undefined;
  if (!withFrontier) return { ...boundary, frontier: [] };
  const indexes = frontierIndexes(boundary.seq);
  const found = await treeHashes(indexes);
  return { ...boundary, frontier: indexes.map((i) => found.get(i) as Hash) };
}

/**
 * What a store does at each step of {@link forgetWith}, in its own engine's way: each write
 * one short transaction of its own, none waiting long for another writer.
 */
export interface ForgetSteps {
  treeSize(): Promise<number>;
  headSeq(): Promise<number>;
  /** The last record let go of before (0 when none). */
  boundary(): Promise<number>;
  /** Records `upTo` as the boundary, with its chain hash from the record; false when no record `upTo` is held. */
  recordBoundary(upTo: number): Promise<boolean>;
  /** The lowest record held that may be let go of (not a continuation record), if any. */
  heldFrom(): Promise<number | undefined>;
  /** Deletes the records in (`lo`, `hi`] but continuation records; how many went. */
  deleteBatch(lo: number, hi: number): Promise<number>;
  /** One step of letting the tree's rows go below `upTo` (see {@link trimmableRowsSql}); how many rows went. */
  trimTreeStep(upTo: number): Promise<number>;
  /** Gives the freed space back as the engine can. */
  giveSpaceBack(): Promise<void>;
  /** The store's size on disk, when the engine says. */
  bytes(): Promise<number | undefined>;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Lets go of the records up to `asked` (see the top of this module for the order, and why),
 * the event loop let through between steps. What cannot be let go of is refused with
 * `error(message)` before anything changes.
 */
export async function forgetWith(
  steps: ForgetSteps,
  asked: number,
  error: (message: string) => Error,
): Promise<Forgotten> {
  const refusal = forgetRefusal(asked, await steps.treeSize());
  if (refusal !== undefined) throw error(refusal);
  const bytesBefore = await steps.bytes();
  const boundary = await steps.boundary();
  const upTo = forgetLimit(asked, await steps.headSeq());
  if (upTo > boundary && !(await steps.recordBoundary(upTo))) {
    throw error(`the store holds no record ${upTo} to let go of`);
  }
  const last = Math.max(upTo, boundary);
  const heldFrom = await steps.heldFrom();
  let records = 0;
  for (const [lo, hi] of heldFrom === undefined ? [] : forgetBatches(heldFrom, last)) {
    records += await steps.deleteBatch(lo, hi);
    await nextTurn();
  }
  while ((await steps.trimTreeStep(trimmableUpTo(last))) === TRIM_STEP_ROWS) await nextTurn();
  await steps.giveSpaceBack();
  return { upTo: last, records, bytesBefore, bytesAfter: await steps.bytes() };
}
