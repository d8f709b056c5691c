import type { ChainHead } from '../../domain/audit/checkpoint.js';
import {
  appendLeaves,
  frontierIndexes,
  type Hash,
  leafHash,
  MerkleError,
  rootOfFrontier,
  storedCount,
} from '../../domain/audit/merkle.js';
import { auditEntryOf, type StoredAuditRecord } from '../../domain/audit/record.js';
import type { TreeHead } from '../../ports/audit-log.js';
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

/**
 * A record's leaf hash: from format version 4 its stored hash is the leaf hash already; a
 * record written before is hashed again, its canonical text behind the leaf prefix.
 */
export function leafOf(record: StoredAuditRecord): Hash {
  if (record.version >= 4) return Buffer.from(record.hash, 'hex');
  const entry = auditEntryOf(record);
  if (entry === undefined) {
    throw new MerkleError(
      `record ${record.seq} has format version ${record.version}, which this service does not know`,
    );
  }
  return leafHash(sha256Bytes, Buffer.from(entry, 'utf8'));
}

/** The state the tree grows from: its size and its right edge (the hashes its root is made of). */
export interface TreeTip {
  readonly size: number;
  readonly frontier: readonly Hash[];
}

/** The row that adding `records` (the next ones, in order) to the tree at `tip` stores, and the new tip. */
export function growBy(
  tip: TreeTip,
  records: readonly StoredAuditRecord[],
): {
  readonly row: { readonly idx: number; readonly size: number; readonly hashes: Buffer };
  readonly tip: TreeTip;
} {
  records.forEach((record, i) => {
    if (record.seq !== tip.size + i + 1) {
      throw new MerkleError(
        `the tree of ${tip.size + i} leaves cannot grow by record ${record.seq}: record ${tip.size + i + 1} is missing`,
      );
    }
  });
  const { stored, frontier } = appendLeaves(sha256Bytes, tip.size, tip.frontier, records.map(leafOf));
  const size = tip.size + records.length;
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
 * The SQL that reads stored hashes by index (the indexes as `$1`/`?`): each from the row that
 * holds it, the last row starting at or before it. SQLite takes the indexes as a JSON array,
 * PostgreSQL as a BIGINT array.
 */
export const treeHashesSql = {
  sqlite: `SELECT j.value AS i,
             (SELECT substr(t.hashes, (j.value - t.idx) * 32 + 1, 32) FROM audit_tree t
               WHERE t.idx <= j.value ORDER BY t.idx DESC LIMIT 1) AS hash
           FROM json_each(?) j`,
  postgres: `SELECT i,
               (SELECT substring(t.hashes FROM ((i - t.idx) * 32 + 1)::int FOR 32) FROM audit_tree t
                 WHERE t.idx <= i ORDER BY t.idx DESC LIMIT 1) AS hash
             FROM unnest($1::bigint[]) AS i`,
} as const;

/** The tree's insert, with the engine's placeholders. */
export const insertTreeRowSql = (placeholder: (n: number) => string) =>
  `INSERT INTO audit_tree (idx, size, hashes) VALUES (${placeholder(1)}, ${placeholder(2)}, ${placeholder(3)})`;

/** The records after the tree's size, at most {@link TREE_STEP}, in the engine's placeholders. */
export const recordsAfterSql = (placeholder: (n: number) => string) =>
  `SELECT * FROM audit WHERE seq > ${placeholder(1)} ORDER BY seq LIMIT ${TREE_STEP}`;

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
