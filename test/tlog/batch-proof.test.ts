import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BatchProofCheck, BatchProofError, batchProofIndexes } from '../../src/tlog/batch-proof.js';
import {
  appendLeaves,
  type Hash,
  inclusionRanges,
  leafHash,
  MerkleError,
  rootOfFrontier,
  storedIndexOf,
  subtreesOf,
} from '../../src/tlog/merkle.js';

const sha256 = (...parts: readonly Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const entry = (i: number) => new TextEncoder().encode(`entry ${i}`);

/** A tree of `size` leaves: its stored hashes (by stored index) and its root. */
function treeOf(size: number): { stored: Hash[]; root: Hash; leaves: Hash[] } {
  const leaves = Array.from({ length: size }, (_, i) => leafHash(sha256, entry(i)));
  const { stored, frontier } = appendLeaves(sha256, 0, [], leaves);
  return { stored, root: rootOfFrontier(sha256, frontier), leaves };
}

/** What Go's tlog.ProveRecord reads for each leaf (its sibling ranges' pieces), the union, ascending. */
function goReads(leaves: readonly number[], size: number): number[] {
  const wanted = new Set<number>();
  for (const leaf of leaves)
    for (const range of inclusionRanges(leaf, size))
      for (const piece of subtreesOf(range)) wanted.add(storedIndexOf(piece));
  return [...wanted].sort((a, b) => a - b);
}

/** Distinct ascending leaves of a tree of 1..600 leaves. */
const batch = fc
  .integer({ min: 1, max: 600 })
  .chain((size) =>
    fc
      .uniqueArray(fc.integer({ min: 0, max: size - 1 }), { minLength: 1, maxLength: Math.min(size, 40) })
      .map((leaves) => ({ size, leaves: leaves.sort((a, b) => a - b) })),
  );

function check(size: number, leaves: readonly number[], hashes: Hash[], leafHashes: Hash[]): Hash {
  const checker = new BatchProofCheck(sha256, leaves, size, (p) => leafHashes[leaves[p] as number] as Hash);
  checker.take(hashes);
  return checker.root();
}

describe('batch proofs', () => {
  it("hold exactly the stored hashes Go's ProveRecord reads for every leaf, ascending", () => {
    fc.assert(
      fc.property(batch, ({ size, leaves }) => {
        expect([...batchProofIndexes(leaves, size)]).toEqual(goReads(leaves, size));
      }),
      { numRuns: 400 },
    );
  });

  it('make the root from the leaves and those hashes, the hashes taken in any slices', () => {
    fc.assert(
      fc.property(batch, fc.integer({ min: 1, max: 7 }), ({ size, leaves }, slice) => {
        const tree = treeOf(size);
        const hashes = goReads(leaves, size).map((i) => tree.stored[i] as Hash);
        const checker = new BatchProofCheck(
          sha256,
          leaves,
          size,
          (p) => tree.leaves[leaves[p] as number] as Hash,
        );
        for (let i = 0; i < hashes.length; i += slice) {
          expect(checker.wants).toBe(goReads(leaves, size)[i]);
          checker.take(hashes.slice(i, i + slice));
        }
        expect(checker.wants).toBeUndefined();
        expect(Buffer.from(checker.root()).equals(Buffer.from(tree.root))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('do not make the root when a leaf or any hash is changed, or a hash is left out or added', () => {
    fc.assert(
      fc.property(batch, fc.nat(), ({ size, leaves }, pick) => {
        const tree = treeOf(size);
        const hashes = goReads(leaves, size).map((i) => tree.stored[i] as Hash);
        const root = Buffer.from(tree.root);
        const rootOr = (run: () => Hash) => {
          try {
            return Buffer.from(run()).equals(root);
          } catch (error) {
            expect(error).toBeInstanceOf(BatchProofError);
            return false;
          }
        };
        // A changed leaf (another entry at its place).
        const changedLeaves = tree.leaves.slice();
        const at = leaves[pick % leaves.length] as number;
        changedLeaves[at] = leafHash(sha256, entry(at + 1_000_000));
        expect(rootOr(() => check(size, leaves, hashes, changedLeaves))).toBe(false);
        if (hashes.length > 0) {
          const changed = hashes.slice();
          const i = pick % hashes.length;
          const bytes = Uint8Array.from(changed[i] as Hash);
          bytes[pick % 32] = (bytes[pick % 32] as number) ^ 1;
          changed[i] = bytes;
          expect(rootOr(() => check(size, leaves, changed, tree.leaves))).toBe(false);
          expect(rootOr(() => check(size, leaves, hashes.slice(0, -1), tree.leaves))).toBe(false);
        }
        expect(rootOr(() => check(size, leaves, [...hashes, tree.root], tree.leaves))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('hold about k·log2(n/k) hashes: 100,000 leaves spread over 10,000,000', () => {
    const leaves = Array.from({ length: 100_000 }, (_, k) => k * 100 + ((k * 37) % 100));
    let count = 0;
    for (const _ of batchProofIndexes(leaves, 10_000_000)) count++;
    // Per leaf: its siblings below the level where the leaves meet (log2(100) ≈ 6.6) and the
    // few above; one tlog-proof@v1 each would hold 24.
    expect(count / leaves.length).toBeGreaterThan(6);
    expect(count / leaves.length).toBeLessThan(10);
  });

  it('refuse leaves out of order, repeated, outside the tree, or none', () => {
    expect(() => [...batchProofIndexes([3, 2], 10)]).toThrow(MerkleError);
    expect(() => [...batchProofIndexes([2, 2], 10)]).toThrow(MerkleError);
    expect(() => [...batchProofIndexes([10], 10)]).toThrow(MerkleError);
    expect(() => [...batchProofIndexes([], 10)]).toThrow(MerkleError);
    expect(() => [...batchProofIndexes([0], 0)]).toThrow(MerkleError);
  });
});

describe('base64 of a batch proof’s hashes', () => {
  it('is standard base64 at any length, megabytes included, and pieces of three hashes join end to end', async () => {
    const { toBase64 } = await import('../../src/tlog/note.js');
    for (const length of [0, 1, 2, 3, 95, 96, 12_287, 12_288, 12_289, 3 * 1024 * 32 * 11 + 5]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 7919) % 256);
      expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    }
    const pieces = [96 * 1024, 96 * 1024, 32].map((n) => Uint8Array.from({ length: n }, (_, i) => i % 251));
    expect(pieces.map(toBase64).join('')).toBe(Buffer.concat(pieces).toString('base64'));
  });
});
