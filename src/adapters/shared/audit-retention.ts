import type { ChainHead } from '../../domain/audit/checkpoint.js';
import { frontierIndexes, type Hash } from '../../domain/audit/merkle.js';
import type { ArchivedStart } from '../../domain/audit/record.js';

/**
 * Letting go of archived records (decisions §15), as both SQL stores do it: the boundary is
 * recorded first (the last record let go of, its seq and chain hash), then the records up to
 * it are deleted a batch per statement, each its own short transaction, so appends wait at
 * most one batch. The tree's hashes stay: proofs of newer records, and the walk from the
 * boundary, go on from them. A run stopped half-way leaves records below the boundary that
 * nothing reads; the next one removes them.
 */

/** Audit store version 6: the boundary of each archive that was let go of. */
export const auditArchivedSql = (types: { readonly seq: string }) => `
  CREATE TABLE audit_archived (
    seq          ${types.seq} PRIMARY KEY,
    hash         TEXT NOT NULL,
    archived_at  TEXT NOT NULL
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

/** The lowest record held (null when none). */
export const HELD_FROM_SQL = 'SELECT min(seq) AS seq FROM audit';

/** Records deleted per statement. */
export const FORGET_BATCH = 2_000;

/** Deletes the records in (`$1`, `$2`]. */
export const forgetBatchSql = (p: (n: number) => string) =>
  `DELETE FROM audit WHERE seq > ${p(1)} AND seq <= ${p(2)}`;

/** Why records up to `upTo` cannot be let go of now, or undefined when they can. */
export function forgetRefusal(upTo: number, treeSize: number): string | undefined {
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
export const forgetLimit = (upTo: number, headSeq: number): number => Math.min(upTo, headSeq - 1);

/** The batches (lo, hi] that delete every record from `heldFrom` up to `upTo`. */
export function* forgetBatches(heldFrom: number, upTo: number): Generator<readonly [number, number]> {
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
