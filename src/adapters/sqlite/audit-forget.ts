// Letting go of a SQLite audit store's archived records (decisions §15): each step of the
// shared forgetWith as this engine takes it, and the freed pages given back to the disk.
import { statSync } from 'node:fs';
import type { ChainHead } from '../../domain/audit/checkpoint.js';
import type { Forgotten } from '../../ports/audit-log.js';
import { StoreError } from '../../ports/stores.js';
import type { Hash } from '../../tlog/merkle.js';
import * as retention from '../shared/audit-retention.js';
import { writeWhenFree } from './audit-busy.js';
import { transaction } from './database.js';
import type { SqlDatabase } from './driver.js';

/** Pages given back to the disk per step of incremental vacuum (4 MiB at 4 KiB a page). */
const VACUUM_STEP_PAGES = 1024;

/** What letting go of records reads of the trail, through its audit log. */
export interface HeldTrail {
  treeSize(): Promise<number>;
  /** The chain head's seq now. */
  headSeq(): number;
  /** The last record let go of before (0 when none). */
  boundary(): Promise<number>;
  /** The chain head at `seq`: the record if held, else the boundary if it is that one. */
  headAt(seq: number): ChainHead | undefined;
  /** The tree's stored hashes of these indexes. */
  hashes(indexes: readonly number[]): Map<number, Hash>;
}

/**
 * Lets go of archived records ({@link retention.forgetWith}): each write takes the write
 * lock briefly, as an append does, and asks again while another writer holds it. The freed
 * pages go back to the disk by incremental vacuum, a step at a time, when the file was made
 * with it (audit stores created from version 6 are); an older file reuses them instead, and
 * stops growing. `path`: the file, to say its size on disk; none for a database in memory.
 */
export function forgetArchived(
  db: SqlDatabase,
  path: string | undefined,
  asked: number,
  trail: HeldTrail,
): Promise<Forgotten> {
  const insert = db.prepare<[number, string, string]>(retention.insertArchivedSql(() => '?'));
  const remove = db.prepare<[number, number]>(retention.forgetBatchSql(() => '?'));
  const held = db.prepare<[], { seq: number | null }>(retention.HELD_FROM_SQL);
  return retention.forgetWith(
    {
      treeSize: () => trail.treeSize(),
      headSeq: async () => trail.headSeq(),
      boundary: () => trail.boundary(),
      recordBoundary: (upTo) =>
        writeWhenFree(() => {
          const last = trail.headAt(upTo);
          if (last !== undefined) insert.run(upTo, last.hash, new Date().toISOString());
          return last !== undefined;
        }),
      heldFrom: async () => held.get()?.seq ?? undefined,
      deleteBatch: (lo, hi) => writeWhenFree(() => remove.run(lo, hi).changes),
      trimTreeStep: (upTo) =>
        writeWhenFree(() => transaction(db, () => trimTreeNow(db, trail, upTo), 'immediate')),
      giveSpaceBack: () => giveSpaceBack(db),
      bytes: async () => bytesOnDisk(path),
    },
    asked,
    (message) => new StoreError(message),
  );
}

/**
 * Lets a step of the tree's rows over the archived range go, keeping the hashes of 256
 * leaves and more (in the write transaction); how many rows went.
 */
function trimTreeNow(db: SqlDatabase, trail: HeldTrail, upTo: number): number {
  const rows = db.prepare<[number], retention.TreeRowPlace>(retention.trimmableRowsSql(() => '?')).all(upTo);
  const span = retention.leavesOfRows(rows);
  if (span === undefined) return 0;
  const indexes = retention.keptIndexes(span.from, span.to);
  const found = trail.hashes(indexes);
  const insert = db.prepare<[number, Uint8Array]>(retention.insertKeptSql(() => '?'));
  for (const i of indexes) insert.run(i, found.get(i) as Hash);
  db.prepare<[number]>(retention.deleteTreeRowsSql(() => '?')).run(span.lastIdx);
  return rows.length;
}

async function giveSpaceBack(db: SqlDatabase): Promise<void> {
  const mode = db.prepare<[], { auto_vacuum: number }>('PRAGMA auto_vacuum').get()?.auto_vacuum;
  if (mode !== 2) return;
  const free = db.prepare<[], { freelist_count: number }>('PRAGMA freelist_count');
  while ((free.get()?.freelist_count ?? 0) > 0) {
    await writeWhenFree(() => db.exec(`PRAGMA incremental_vacuum(${VACUUM_STEP_PAGES})`));
    await new Promise((resolve) => setImmediate(resolve));
  }
  // The file shrinks when the WAL is checkpointed; a reader in the way leaves it to the next one.
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
}

/** The file and its WAL, in bytes; undefined in memory. */
function bytesOnDisk(path: string | undefined): number | undefined {
  if (path === undefined || path === ':memory:') return undefined;
  const size = (file: string) => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  return size(path) + size(`${path}-wal`);
}
