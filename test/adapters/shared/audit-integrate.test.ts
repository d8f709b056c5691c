import { describe, expect, it } from 'vitest';
import { EMPTY_CHAIN } from '../../../src/adapters/shared/audit-chain.js';
import {
  type GrownRow,
  growStep,
  growStepSync,
  hashesOfRows,
  type LeafRow,
  leafOf,
  type SyncTreeIo,
  TREE_STEP,
  type TreeIo,
} from '../../../src/adapters/shared/audit-tree.js';
import { sha256Bytes, sha256Hex } from '../../../src/adapters/shared/sha256.js';
import { auditEntryOf, canonicalAuditText } from '../../../src/domain/audit/canonical-text.js';
import { chainRecord } from '../../../src/domain/audit/chain.js';
import type { StoredAuditRecord } from '../../../src/domain/audit/record.js';
import type { TreeHead } from '../../../src/ports/audit-log.js';
import { appendLeaves } from '../../../src/tlog/merkle.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { referenceRoot } from '../../support/merkle-reference.js';

/** `count` records, the first `older` of them written before format 4 (format 3). */
function trail(count: number, older = 0): StoredAuditRecord[] {
  const records: StoredAuditRecord[] = [];
  let previous = EMPTY_CHAIN.hash;
  for (let seq = 1; seq <= count; seq++) {
    const record = auditRecord(seq);
    const stored =
      seq <= older
        ? {
            ...chainRecord(record, seq, previous, sha256Hex),
            version: 3,
            hash: sha256Hex(canonicalAuditText(record, seq, previous, undefined, 3)),
          }
        : chainRecord(record, seq, previous, sha256Hex);
    records.push(stored);
    previous = stored.hash;
  }
  return records;
}

/** A store in memory: the tree's rows as the SQL stores keep them, every read and write noted. */
class MemoryStore {
  readonly rows: GrownRow[] = [];
  readonly asked: string[] = [];

  constructor(readonly records: StoredAuditRecord[]) {}

  io(): SyncTreeIo {
    return {
      treeSize: () => this.rows.at(-1)?.size ?? 0,
      readHashes: (indexes) =>
        hashesOfRows(
          indexes.map((i) => {
            const row = this.rows.findLast((r) => r.idx <= i);
            return { i, hash: row?.hashes.subarray((i - row.idx) * 32, (i - row.idx + 1) * 32) ?? null };
          }),
          indexes,
        ),
      leafRowsAfter: (size) =>
        this.records
          .slice(size, size + TREE_STEP)
          .map((r): LeafRow => ({ seq: r.seq, version: r.version, hash: r.hash })),
      olderRecords: (after, to) => {
        this.asked.push(`older ${after}..${to}`);
        return this.records.filter((r) => r.seq > after && r.seq <= to && r.version < 4);
      },
      headAt: (size) => {
        this.asked.push(`head ${size}`);
        const r = this.records[size - 1];
        return r === undefined ? EMPTY_CHAIN : { seq: r.seq, hash: r.hash };
      },
      writeHashes: (row) => {
        this.rows.push(row);
      },
    };
  }

  /** The same reads and writes, each answered with a promise (as PostgreSQL's client does). */
  asyncIo(): TreeIo {
    const io = this.io();
    return {
      treeSize: async () => io.treeSize(),
      readHashes: async (indexes) => io.readHashes(indexes),
      leafRowsAfter: async (size) => io.leafRowsAfter(size),
      olderRecords: async (after, to) => io.olderRecords(after, to),
      headAt: async (size) => io.headAt(size),
      writeHashes: async (row, tip) => io.writeHashes(row, tip),
    };
  }
}

function growAll(store: MemoryStore): { head: TreeHead; steps: number } {
  for (let steps = 1; ; steps++) {
    const head = growStepSync(store.io());
    if (head !== undefined) return { head, steps };
  }
}

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');
const entriesOf = (records: readonly StoredAuditRecord[]) =>
  records.map((r) => new TextEncoder().encode(auditEntryOf(r) ?? ''));

describe('growStepSync / growStep: one step of growing the stored tree, over any store', () => {
  it('grows an empty tree to nothing, and names the empty chain', () => {
    const store = new MemoryStore([]);
    expect(growStepSync(store.io())).toEqual({ size: 0, head: EMPTY_CHAIN });
    expect(store.rows).toEqual([]);
  });

  it(`grows a step (${TREE_STEP} records) a row: the stored hashes those of every leaf appended at once, the root RFC 9162's`, () => {
    const records = trail(2 * TREE_STEP + 452);
    const store = new MemoryStore(records);
    const { head, steps } = growAll(store);
    expect(steps).toBe(3);
    expect(store.rows.map((r) => [r.idx, r.size])).toEqual([
      [0, TREE_STEP],
      [2 * TREE_STEP - 1, 2 * TREE_STEP],
      [4 * TREE_STEP - 1, records.length],
    ]);
    const whole = appendLeaves(sha256Bytes, 0, [], records.map(leafOf)).stored;
    expect(hex(Buffer.concat(store.rows.map((r) => r.hashes)))).toBe(hex(Buffer.concat(whole)));
    expect(head.size).toBe(records.length);
    expect(head.head).toEqual({ seq: records.length, hash: records.at(-1)?.hash });
    expect(hex(head.root)).toBe(hex(referenceRoot(entriesOf(records))));
    // Grown already: no row more, the head read at the tree's size.
    store.asked.length = 0;
    expect(growStepSync(store.io())).toEqual(head);
    expect(store.rows).toHaveLength(3);
    expect(store.asked).toEqual([`head ${records.length}`]);
  });

  it('stores the same rows when each answer is a promise (growStep)', async () => {
    const records = trail(TREE_STEP + 7, 3);
    const sync = new MemoryStore(records);
    growAll(sync);
    const async = new MemoryStore(records);
    let head: TreeHead | undefined;
    while (head === undefined) head = await growStep(async.asyncIo());
    expect(async.rows).toEqual(sync.rows);
    expect(hex(head.root)).toBe(hex(referenceRoot(entriesOf(records))));
  });

  it('reads records before format 4 whole only in a step that has one, over that step alone', () => {
    const records = trail(TREE_STEP + 10, 5);
    const store = new MemoryStore(records);
    const { head } = growAll(store);
    expect(store.asked.filter((a) => a.startsWith('older'))).toEqual([`older 0..${TREE_STEP}`]);
    expect(hex(head.root)).toBe(hex(referenceRoot(entriesOf(records))));
  });

  it('takes a leaf a row carries, and asks for no record then', () => {
    const records = trail(6, 2);
    const store = new MemoryStore(records);
    const io = store.io();
    const head = growStepSync({
      ...io,
      leafRowsAfter: (size) =>
        io.leafRowsAfter(size).map((row, i) => {
          const record = records[size + i] as StoredAuditRecord;
          return record.version < 4 ? { ...row, leaf: leafOf(record) } : row;
        }),
    });
    expect(store.asked).toEqual([]);
    expect(hex(head?.root)).toBe(hex(referenceRoot(entriesOf(records))));
  });

  it('refuses to grow over a gap, and a store that answers a synchronous step with a promise', async () => {
    const records = trail(4);
    const gap = new MemoryStore([records[0], records[2], records[3]] as StoredAuditRecord[]);
    expect(() => growStepSync(gap.io())).toThrow(/cannot grow by record 3: record 2 is missing/);
    expect(gap.rows).toEqual([]);
    const store = new MemoryStore(records);
    const answersLater = { ...store.io(), treeSize: () => Promise.resolve(0) } as unknown as SyncTreeIo;
    expect(() => growStepSync(answersLater)).toThrow(/answered growing with a promise/);
    expect(store.rows).toEqual([]);
  });
});
