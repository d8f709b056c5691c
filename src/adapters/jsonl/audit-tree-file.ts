import { appendFileSync, closeSync, existsSync, openSync, readSync, statSync, truncateSync } from 'node:fs';
import type { ChainHead } from '../../domain/audit/checkpoint.js';
import { CURRENT_AUDIT_VERSION } from '../../domain/audit/record.js';
import type { TreeHead } from '../../ports/audit-log.js';
import { frontierIndexes, type Hash, storedCount } from '../../tlog/merkle.js';
import * as tree from '../shared/audit-tree.js';
import { JsonlAuditStoreError, recordOf } from './audit-format.js';

/**
 * The tree file beside the trail: `PATH.tree`, the tree's stored hashes end to end (stored
 * hash i at byte 32·i), appended by the writer as the tree grows, never changed.
 */
export const treePathOf = (path: string) => `${path}.tree`;

/** How many whole leaves the tree file holds, and the bytes that are whole. */
export function treeFileSize(file: string): {
  readonly size: number;
  readonly bytes: number;
  readonly length: number;
} {
  const length = existsSync(file) ? statSync(file).size : 0;
  const size = tree.sizeOfStored(Math.floor(length / 32));
  return { size, bytes: storedCount(size) * 32, length };
}

/** Stored hashes read from the tree file by index. */
export function hashesOfFile(file: string, indexes: readonly number[]): Map<number, Hash> {
  const found = new Map<number, Hash>();
  if (indexes.length === 0) return found;
  const { bytes } = treeFileSize(file);
  const fd = openSync(file, 'r');
  try {
    for (const i of indexes) {
      if ((i + 1) * 32 > bytes) continue;
      const hash = new Uint8Array(32);
      if (readSync(fd, hash, 0, 32, i * 32) === 32) found.set(i, hash);
    }
  } finally {
    closeSync(fd);
  }
  return tree.hashesOfRows(
    [...found].map(([i, hash]) => ({ i, hash })),
    indexes,
  );
}

/**
 * The tree as its writer grows it: the tip (kept as it grew, so growing reads nothing back)
 * and the records written since, each by its chain hash, which from format 4 is its leaf.
 * It grows by the shared step ({@link tree.growStepSync}) over all of them at once, their
 * hashes going to the end of the tree file in one write.
 */
/** How many records' hashes wait in memory at most before the tree grows by itself (about 9 MiB). */
export const GROW_EVERY = 65_536;

export class WrittenTree {
  /** The chain hashes of the records after the tip, in seq order. */
  private pending: string[] = [];
  /** Of those read back when the trail opened, each one whose hash is not its leaf (a record before format 4), as a row with its leaf. */
  private readonly made = new Map<number, tree.LeafRow>();

  private constructor(
    private readonly file: string,
    private tip: tree.TreeTip,
  ) {}

  /**
   * Reads where the tree file stands: a hash cut off mid-write is cut off again, and the
   * records written since it last grew are found (the trail's lines after its size). `fd` is
   * the trail's, read up to `end` (its last whole record, `seq`).
   */
  static open(path: string, fd: number, end: number, seq: number): WrittenTree {
    const file = treePathOf(path);
    const { size, bytes, length } = treeFileSize(file);
    if (size > seq) {
      throw new JsonlAuditStoreError(
        `the tree file ${file} covers ${size} records but the trail holds ${seq}: records were removed; run case-read audit verify --audit-store jsonl:${path}`,
      );
    }
    if (length > bytes) truncateSync(file, bytes);
    const written = new WrittenTree(file, tree.tipFrom(size, hashesOfFile(file, frontierIndexes(size))));
    if (size === seq) return written;
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(256 * 1024);
    let rest = '';
    let line = 0;
    let position = 0;
    while (position < end) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, end - position), position);
      if (read === 0) break;
      position += read;
      const text = rest + decoder.decode(buffer.subarray(0, read), { stream: true });
      let start = 0;
      for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
        line++;
        if (line > size) {
          const record = recordOf(text.slice(start, newline));
          if (record === undefined || record.seq !== line) {
            throw new JsonlAuditStoreError(
              `line ${line} of audit store ${path} is not record ${line}; run case-read audit verify --audit-store jsonl:${path}`,
            );
          }
          const leaf = tree.leafOf(record);
          if (Buffer.from(leaf).toString('hex') !== record.hash) {
            written.made.set(line, { seq: line, version: record.version, hash: record.hash, leaf });
          }
          written.pending.push(record.hash);
        }
        start = newline + 1;
      }
      rest = text.slice(start);
    }
    return written;
  }

  /** How many leaves the tree holds. */
  get size(): number {
    return this.tip.size;
  }

  /** Notes the chain hashes of records just written (format 4 or later: each its leaf). */
  add(hashes: readonly string[], head: ChainHead): void {
    for (const hash of hashes) this.pending.push(hash);
    // Without checkpoints nothing else grows the tree: it grows here every so often, so what
    // waits in memory stays bounded. One that fails leaves them waiting for the next batch.
    if (this.pending.length >= GROW_EVERY) {
      try {
        this.grow(head);
      } catch {
        // The records are stored; their hashes go to the tree file with a later batch.
      }
    }
  }

  /**
   * Grows the tree over every record written since it last grew, to `head` (the trail's):
   * their hashes go to the end of the tree file in one write, cut off again if it fails (the
   * records stay pending).
   */
  grow(head: ChainHead): TreeHead {
    const io: tree.SyncTreeIo = {
      step: Number.POSITIVE_INFINITY,
      treeSize: () => this.tip.size,
      // The stored hashes growing reads are the tip's frontier: kept, not read back.
      readHashes: (indexes) =>
        tree.hashesOfRows(
          frontierIndexes(this.tip.size).map((i, k) => ({ i, hash: this.tip.frontier[k] ?? null })),
          indexes,
        ),
      leafRowsAfter: (size) => {
        const rows: tree.LeafRow[] = new Array(this.pending.length);
        for (let i = 0; i < rows.length; i++) {
          const seq = size + i + 1;
          rows[i] = this.made.get(seq) ?? {
            seq,
            version: CURRENT_AUDIT_VERSION,
            hash: this.pending[i] as string,
          };
        }
        return rows;
      },
      // Never asked: a record before format 4 comes with its leaf (made when the trail opened).
      olderRecords: () => [],
      headAt: () => head,
      writeHashes: (row, tip) => {
        const before = treeFileSize(this.file).bytes;
        try {
          appendFileSync(this.file, row.hashes, { mode: 0o600 });
        } catch (error) {
          try {
            if (existsSync(this.file)) truncateSync(this.file, before);
          } catch {
            // The next open cuts off what is not whole; a whole hash left over is found by verify.
          }
          throw error;
        }
        this.pending = this.pending.slice(tip.size - this.tip.size);
        for (const seq of this.made.keys()) if (seq <= tip.size) this.made.delete(seq);
        this.tip = tip;
      },
    };
    for (;;) {
      const grown = tree.growStepSync(io);
      if (grown !== undefined) return grown;
    }
  }
}
