import { describe, expect, it } from 'vitest';
import { sizeOfStored, WrittenLeaves } from '../../../src/adapters/shared/audit-tree.js';
import { storedCount } from '../../../src/domain/audit/merkle.js';
import type { StoredAuditRecord } from '../../../src/domain/audit/record.js';

const records = (from: number, to: number) =>
  Array.from(
    { length: to - from + 1 },
    (_, i) => ({ seq: from + i, version: 4, hash: `h${from + i}` }) as StoredAuditRecord,
  );
const seqs = (rows: readonly { seq: number | string }[] | undefined) => rows?.map((r) => Number(r.seq));

describe('WrittenLeaves: what one writer committed, for the tree to grow over without reading it back', () => {
  it('gives a held run, lets go of what it gave, and refuses what it does not hold whole', () => {
    const held = new WrittenLeaves();
    held.add(records(1, 5));
    held.add(records(6, 8));
    expect(seqs(held.take(0, 4))).toEqual([1, 2, 3, 4]);
    // Record 4 was given already: not again.
    expect(held.take(3, 8)).toBeUndefined();
    expect(seqs(held.take(4, 8))).toEqual([5, 6, 7, 8]);
    // Beyond what it holds (another writer's records after): the store is read instead.
    held.add(records(9, 10));
    expect(held.take(8, 11)).toBeUndefined();
    expect(held.take(8, 8)).toBeUndefined();
  });

  it("starts again when another writer's records came in between", () => {
    const held = new WrittenLeaves();
    held.add(records(1, 3));
    held.add(records(7, 9));
    expect(held.take(0, 3)).toBeUndefined();
    expect(seqs(held.take(6, 9))).toEqual([7, 8, 9]);
  });
});

describe('sizeOfStored', () => {
  it('is the largest tree whose stored hashes fit, for every count', () => {
    for (let size = 0; size < 600; size++) {
      const count = storedCount(size);
      expect(sizeOfStored(count)).toBe(size);
      // A hash cut off mid-write (one more, not a whole next leaf) still counts as `size`.
      if (storedCount(size + 1) > count + 1) expect(sizeOfStored(count + 1)).toBe(size);
    }
  });
});
