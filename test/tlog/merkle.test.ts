import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  appendLeaves,
  consistencyRanges,
  frontierIndexes,
  type Hash,
  inclusionRanges,
  leafHash,
  MerkleError,
  nodeHash,
  rangeHashes,
  rootOfFrontier,
  rootRange,
  type Sha256,
  storedCount,
  storedIndexesFor,
  verifyConsistency,
  verifyInclusion,
} from '../../src/tlog/merkle.js';

const sha256: Sha256 = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};
const hex = (hash: Hash) => Buffer.from(hash).toString('hex');
const entry = (i: number) => new TextEncoder().encode(`entry ${i}`);

/** RFC 9162 §2.1.1's definition, word for word: MTH of a list, split at the largest power of two below n. */
function mth(leaves: readonly Uint8Array[]): Hash {
  if (leaves.length === 1) return leafHash(sha256, leaves[0] as Uint8Array);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(sha256, mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** A log of `size` entries grown by appends of varying batch sizes, its stored hashes kept by index. */
function growLog(size: number) {
  const stored = new Map<number, Hash>();
  const roots: Hash[] = [];
  let n = 0;
  let batch = 1;
  while (n < size) {
    const count = Math.min(batch, size - n);
    const frontier = frontierIndexes(n).map((i) => stored.get(i) as Hash);
    const leaves = Array.from({ length: count }, (_, j) => leafHash(sha256, entry(n + j)));
    const appended = appendLeaves(sha256, n, frontier, leaves);
    for (const [j, hash] of appended.stored.entries()) stored.set(storedCount(n) + j, hash);
    n += count;
    roots[n] = rootOfFrontier(sha256, appended.frontier);
    batch = (batch % 5) + 1;
  }
  return { stored, roots };
}

const hashesFor = (ranges: ReturnType<typeof inclusionRanges>, stored: Map<number, Hash>) => {
  const needed = new Map(storedIndexesFor(ranges).map((i) => [i, stored.get(i) as Hash]));
  return rangeHashes(sha256, ranges, needed);
};

describe('the RFC 9162 tree', () => {
  it('has the RFC 6962 test vectors: the empty leaf, and the root of the eight test leaves', () => {
    expect(hex(leafHash(sha256, new Uint8Array()))).toBe(
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    );
    const leaves = [
      '',
      '00',
      '10',
      '2021',
      '3031',
      '40414243',
      '5051525354555657',
      '606162636465666768696a6b6c6d6e6f',
    ].map((h) => new Uint8Array(Buffer.from(h, 'hex')));
    expect(hex(mth(leaves))).toBe('5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328');
  });

  it('stores 2n − popcount(n) hashes, and grows to the same root as the definition, whatever the batches', () => {
    const size = 130;
    const { stored, roots } = growLog(size);
    expect(stored.size).toBe(storedCount(size));
    expect(storedCount(size)).toBe(2 * size - [...size.toString(2)].filter((b) => b === '1').length);
    const entries = Array.from({ length: size }, (_, i) => entry(i));
    for (let n = 1; n <= size; n++) {
      const root = hex(hashesFor(rootRange(n), stored)[0] as Hash);
      expect(root, `size ${n}`).toBe(hex(mth(entries.slice(0, n))));
      if (roots[n]) expect(hex(roots[n] as Hash)).toBe(root);
    }
  });

  it('reads at most log2(n) + 1 stored hashes for a root, and as many for a frontier', () => {
    for (const n of [1, 2, 3, 255, 256, 257, 1_000_000, 3_000_000_000]) {
      expect(frontierIndexes(n).length).toBeLessThanOrEqual(Math.floor(Math.log2(n)) + 1);
    }
    // Past 2^32 leaves: no 32-bit arithmetic anywhere.
    expect(storedCount(2 ** 33)).toBe(2 ** 34 - 1);
  });

  it('proves every leaf of every tree up to 40, and refuses a changed leaf, proof, index or root', () => {
    const { stored } = growLog(40);
    for (let n = 1; n <= 40; n++) {
      const [root] = hashesFor(rootRange(n), stored) as [Hash];
      for (let i = 0; i < n; i++) {
        const proof = hashesFor(inclusionRanges(i, n), stored);
        const leaf = leafHash(sha256, entry(i));
        expect(verifyInclusion(sha256, i, n, leaf, proof, root), `${i} in ${n}`).toBe(true);
        expect(verifyInclusion(sha256, i, n, leafHash(sha256, entry(i + 1)), proof, root)).toBe(false);
        if (n > 1) expect(verifyInclusion(sha256, (i + 1) % n, n, leaf, proof, root)).toBe(false);
        if (proof.length > 0) {
          const bent = proof.map((h, j) =>
            j === 0 ? Uint8Array.from(h, (b, k) => (k === 0 ? b ^ 1 : b)) : h,
          );
          expect(verifyInclusion(sha256, i, n, leaf, bent, root)).toBe(false);
        }
      }
    }
  });

  it('proves every tree up to 40 consistent with every smaller one, and refuses a changed root or proof', () => {
    const { stored } = growLog(40);
    const roots = Array.from({ length: 41 }, (_, n) =>
      n === 0 ? undefined : hashesFor(rootRange(n), stored)[0],
    );
    for (let n = 1; n <= 40; n++) {
      for (let m = 1; m <= n; m++) {
        const proof = hashesFor(consistencyRanges(m, n), stored);
        const [old, cur] = [roots[m] as Hash, roots[n] as Hash];
        expect(verifyConsistency(sha256, m, n, old, cur, proof), `${m} → ${n}`).toBe(true);
        if (m < n) {
          expect(verifyConsistency(sha256, m, n, roots[n] as Hash, cur, proof)).toBe(false);
          expect(verifyConsistency(sha256, m, n, old, cur, proof.slice(1))).toBe(false);
        }
      }
    }
  });

  it('refuses a question that cannot be asked, in words', () => {
    expect(() => inclusionRanges(5, 5)).toThrow(new MerkleError('leaf 5 is not in a tree of 5'));
    expect(() => consistencyRanges(6, 5)).toThrow(MerkleError);
    expect(() => rootRange(0)).toThrow(/at least one leaf/);
    expect(() => appendLeaves(sha256, 3, [], [leafHash(sha256, entry(3))])).toThrow(/frontier/);
  });
});
