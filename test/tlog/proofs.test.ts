import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  appendLeaves,
  consistencyRanges,
  frontierIndexes,
  type Hash,
  leafHash,
  rootOfFrontier,
  type Sha256,
  storedCount,
  storedIndexOf,
  verifyConsistency,
  verifyInclusion,
} from '../../src/tlog/merkle.js';
import { type HashSource, proofHashes, proveFrom, storedSubtreeOf } from '../../src/tlog/proofs.js';

/**
 * The one proof builder (src/tlog/proofs.ts): proofs made of any source of the stored hashes,
 * checked against the roots before they are given.
 */

const sha256: Sha256 = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};
const entry = (i: number) => new TextEncoder().encode(`entry ${i}`);

/** A tree of `size` leaves, its stored hashes by index, and its root at every size. */
function tree(size: number) {
  const stored = new Map<number, Hash>();
  const roots: Hash[] = [];
  for (let n = 0; n < size; n++) {
    const frontier = frontierIndexes(n).map((i) => stored.get(i) as Hash);
    const appended = appendLeaves(sha256, n, frontier, [leafHash(sha256, entry(n))]);
    for (const [j, hash] of appended.stored.entries()) stored.set(storedCount(n) + j, hash);
    roots[n + 1] = rootOfFrontier(sha256, appended.frontier);
  }
  return { stored, roots };
}

/** A source over `stored` that notes every read, in the order asked. */
function sourceOf(stored: ReadonlyMap<number, Hash>) {
  const asked: number[][] = [];
  const source: HashSource = {
    hashes: async (indexes) => {
      asked.push([...indexes]);
      return new Map(indexes.flatMap((i) => (stored.has(i) ? [[i, stored.get(i) as Hash] as const] : [])));
    },
  };
  return { source, asked };
}

describe('storedSubtreeOf', () => {
  it('is the inverse of storedIndexOf, at every level, past 2^32 leaves too', () => {
    for (let index = 0; index < 5000; index++) expect(storedIndexOf(storedSubtreeOf(index))).toBe(index);
    for (const subtree of [
      { level: 0, index: 2 ** 33 + 5 },
      { level: 8, index: 2 ** 30 - 1 },
      { level: 40, index: 3 },
    ])
      expect(storedSubtreeOf(storedIndexOf(subtree))).toEqual(subtree);
    expect(() => storedSubtreeOf(-1)).toThrow(RangeError);
  });
});

describe('proveFrom', () => {
  const { stored, roots } = tree(300);

  it('gives every inclusion proof of a tree, each verifying, read from the source in one call', async () => {
    for (const size of [1, 2, 7, 256, 257, 300]) {
      for (const index of [0, Math.floor(size / 2), size - 1]) {
        const { source, asked } = sourceOf(stored);
        const leaf = leafHash(sha256, entry(index));
        const root = roots[size] as Hash;
        const proof = await proveFrom(sha256, source, { inclusion: index, leaf, size, root });
        expect(proof).toBeDefined();
        expect(verifyInclusion(sha256, index, size, leaf, proof as Hash[], root)).toBe(true);
        expect(asked).toHaveLength(1);
        expect(new Set(asked[0]).size).toBe(asked[0]?.length);
      }
    }
  });

  it('gives consistency proofs, checked against both roots', async () => {
    for (const [oldSize, size] of [
      [1, 300],
      [256, 300],
      [100, 257],
      [300, 300],
    ] as const) {
      const roots_ = { old: roots[oldSize] as Hash, new: roots[size] as Hash };
      const proof = await proveFrom(sha256, sourceOf(stored).source, {
        consistency: oldSize,
        size,
        roots: roots_,
      });
      expect(proof).toEqual(
        await proofHashes(sha256, sourceOf(stored).source, consistencyRanges(oldSize, size)),
      );
      expect(verifyConsistency(sha256, oldSize, size, roots_.old, roots_.new, proof as Hash[])).toBe(true);
    }
  });

  it('gives nothing when the source’s hashes do not make the roots given', async () => {
    const { source } = sourceOf(stored);
    const leaf = leafHash(sha256, entry(5));
    expect(await proveFrom(sha256, source, { inclusion: 5, leaf, size: 300, root: roots[299] as Hash })).toBe(
      undefined,
    );
    expect(
      await proveFrom(sha256, source, { inclusion: 6, leaf, size: 300, root: roots[300] as Hash }),
    ).toBeUndefined();
    expect(
      await proveFrom(sha256, source, {
        consistency: 10,
        size: 300,
        roots: { old: roots[11] as Hash, new: roots[300] as Hash },
      }),
    ).toBeUndefined();
    // Another tree's hashes (the leaf's sibling changed): refused, not handed out.
    const changed = new Map(stored);
    changed.set(storedIndexOf({ level: 0, index: 4 }), sha256(entry(0)));
    const other = sourceOf(changed).source;
    expect(
      await proveFrom(sha256, other, { inclusion: 5, leaf, size: 300, root: roots[300] as Hash }),
    ).toBeUndefined();
  });

  it('names a stored hash the source does not give', async () => {
    const { source } = sourceOf(new Map());
    await expect(
      proveFrom(sha256, source, {
        inclusion: 0,
        leaf: leafHash(sha256, entry(0)),
        size: 2,
        root: roots[2] as Hash,
      }),
    ).rejects.toThrow(/needs stored hash 1, not given/);
  });
});
