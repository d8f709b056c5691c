import { describe, expect, it } from 'vitest';
import { MAX_WRITTEN_LEAVES, sizeOfStored, WrittenLeaves } from '../../../src/adapters/shared/audit-tree.js';
import type { StoredAuditRecord } from '../../../src/domain/audit/record.js';
import { storedCount } from '../../../src/tlog/merkle.js';

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

describe('WrittenLeaves: bounded, for a writer whose tree is never grown here', () => {
  it(`keeps at most ${MAX_WRITTEN_LEAVES} rows: past that it lets go of them all and starts again`, () => {
    const held = new WrittenLeaves();
    for (let seq = 1; seq <= 3 * MAX_WRITTEN_LEAVES; seq += 16) held.add(records(seq, seq + 15));
    // The oldest are no longer held (growing reads them from the store); the newest run is.
    expect(held.take(0, 16)).toBeUndefined();
    const last = 3 * MAX_WRITTEN_LEAVES;
    const run = held.take(last - 16, last);
    expect(seqs(run)).toEqual(seqs(records(last - 15, last)));
    // What was held since it started again is at most the bound.
    const again = new WrittenLeaves();
    for (let seq = 1; seq <= MAX_WRITTEN_LEAVES + 32; seq += 16) again.add(records(seq, seq + 15));
    expect(again.take(MAX_WRITTEN_LEAVES - 1, MAX_WRITTEN_LEAVES + 32)).toBeUndefined();
    expect(seqs(again.take(MAX_WRITTEN_LEAVES, MAX_WRITTEN_LEAVES + 32))).toHaveLength(32);
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
