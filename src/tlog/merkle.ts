/**
 * The audit trail as an RFC 9162 §2.1 Merkle tree (decisions §14): the records, in seq order,
 * are its leaves (leaf index = seq − 1). A leaf's hash is SHA-256(0x00 ‖ entry), an interior
 * node's SHA-256(0x01 ‖ left ‖ right), and the tree of n leaves splits at the largest power of
 * two below n. Checkpoints sign its root; an inclusion proof shows one record in a tree of a
 * given size, a consistency proof that a larger tree extends a smaller one, each in O(log n)
 * hashes.
 *
 * What is stored: every complete, aligned subtree's hash, in the order the tree grows (the
 * leaf, then each subtree it completes), so a tree of n leaves holds 2n − popcount(n) hashes,
 * each written once and never changed. Any subtree hash a root or a proof needs is made of at
 * most log n of them. The functions here plan which stored hashes a question needs (so a store
 * reads them in one query) and compute the answer from them; the SHA-256 is given.
 */

/** A SHA-256 digest, 32 bytes. */
export type Hash = Uint8Array;

/** SHA-256 over the concatenation of `parts`. */
export type Sha256 = (...parts: readonly Uint8Array[]) => Hash;

const LEAF = Uint8Array.of(0x00);
const NODE = Uint8Array.of(0x01);

/** The hash of a leaf: SHA-256(0x00 ‖ entry). */
export const leafHash = (sha256: Sha256, entry: Uint8Array): Hash => sha256(LEAF, entry);

/** The hash of an interior node: SHA-256(0x01 ‖ left ‖ right). */
export const nodeHash = (sha256: Sha256, left: Hash, right: Hash): Hash => sha256(NODE, left, right);

/** Whether two hashes are the same bytes. */
export function sameHash(a: Hash, b: Hash): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Sizes run past 2^32 (years of trail), so no 32-bit bit operators: halving and parity in
// floating point, exact for every safe integer.
const half = (n: number) => Math.floor(n / 2);
const odd = (n: number) => n % 2 === 1;

/** The largest power of two smaller than `n` (n ≥ 2): where RFC 9162 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

const isPowerOfTwo = (n: number) => {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
};

/** A whole subtree: the 2^level leaves from index·2^level. */
export interface Subtree {
  readonly level: number;
  readonly index: number;
}

/**
 * Where a subtree's hash is in the stored sequence. Leaf n is stored after the hashes of the
 * n leaves before it and of every subtree they complete (2n − popcount(n) of them); a subtree
 * at level L right after its last leaf and the L − 1 subtrees below it that that leaf completes.
 */
export function storedIndexOf({ level, index }: Subtree): number {
  // The subtree's last leaf: (index + 1)·2^level − 1.
  let last = index;
  for (let l = 0; l < level; l++) last = 2 * last + 1;
  return storedCount(last) + level;
}

/**
 * How many hashes a tree of `size` leaves stores, 2·size − popcount(size): so also where the
 * hashes of leaf `size` begin.
 */
export function storedCount(size: number): number {
  let count = 0;
  for (let m = size; m > 0; m = half(m)) count += m;
  return count;
}

/** A run of leaves [lo, hi), one hash of a root or a proof: MTH(D[lo:hi]). */
export interface LeafRange {
  readonly lo: number;
  readonly hi: number;
}

/**
 * The whole subtrees a range is made of, left to right, by RFC 9162's split: the left part of
 * each split is whole and aligned (its hash is stored), the right part is split again.
 */
export function subtreesOf({ lo, hi }: LeafRange): Subtree[] {
  const pieces: Subtree[] = [];
  let from = lo;
  while (from < hi) {
    const width = hi - from;
    if (isPowerOfTwo(width) && from % width === 0) {
      pieces.push(subtreeAt(from, width));
      break;
    }
    const k = splitPoint(width);
    pieces.push(subtreeAt(from, k));
    from += k;
  }
  return pieces;
}

function subtreeAt(from: number, width: number): Subtree {
  let level = 0;
  for (let w = width; w > 1; w = half(w)) level++;
  return { level, index: from / width };
}

/** The stored hashes the ranges need, each once, in ascending order: one read for a store. */
export function storedIndexesFor(ranges: readonly LeafRange[]): number[] {
  const wanted = new Set<number>();
  for (const range of ranges) for (const piece of subtreesOf(range)) wanted.add(storedIndexOf(piece));
  return [...wanted].sort((a, b) => a - b);
}

/** The hash of each range, from the stored hashes it is made of (`stored` by stored index). */
export function rangeHashes(
  sha256: Sha256,
  ranges: readonly LeafRange[],
  stored: ReadonlyMap<number, Hash>,
): Hash[] {
  return ranges.map((range) => {
    const pieces = subtreesOf(range).map((piece) => {
      const hash = stored.get(storedIndexOf(piece));
      if (hash === undefined) {
        throw new MerkleError(
          `the hash of leaves ${range.lo}..${range.hi - 1} needs stored hash ${storedIndexOf(piece)}, not given`,
        );
      }
      return hash;
    });
    // MTH = NODE(p0, NODE(p1, … NODE(pk−1, pk))): folded from the right.
    let hash = pieces[pieces.length - 1] as Hash;
    for (let i = pieces.length - 2; i >= 0; i--) hash = nodeHash(sha256, pieces[i] as Hash, hash);
    return hash;
  });
}

/** A question about the tree that cannot be asked, or stored hashes that do not answer it. */
export class MerkleError extends Error {
  override readonly name = 'MerkleError';
}

/** The root of a tree of `size` leaves, as one range. */
export function rootRange(size: number): LeafRange[] {
  if (!Number.isSafeInteger(size) || size < 1)
    throw new MerkleError(`a tree needs at least one leaf, not ${size}`);
  return [{ lo: 0, hi: size }];
}

/**
 * RFC 9162 §2.1.3.1: the ranges whose hashes prove leaf `index` in the tree of `size` leaves,
 * from the leaf's sibling up to the root's child.
 */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  if (!Number.isSafeInteger(size) || !Number.isSafeInteger(index) || index < 0 || index >= size) {
    throw new MerkleError(`leaf ${index} is not in a tree of ${size}`);
  }
  const path: LeafRange[] = [];
  const walk = (m: number, lo: number, hi: number): void => {
    if (hi - lo === 1) return;
    const k = splitPoint(hi - lo);
    if (m < k) {
      walk(m, lo, lo + k);
      path.push({ lo: lo + k, hi });
    } else {
      walk(m - k, lo + k, hi);
      path.push({ lo, hi: lo + k });
    }
  };
  walk(index, 0, size);
  return path;
}

/**
 * RFC 9162 §2.1.4.1: the ranges whose hashes prove that the tree of `newSize` leaves extends
 * the tree of `oldSize` (0 < oldSize ≤ newSize; empty when they are equal).
 */
export function consistencyRanges(oldSize: number, newSize: number): LeafRange[] {
  if (!Number.isSafeInteger(oldSize) || !Number.isSafeInteger(newSize) || oldSize < 1 || oldSize > newSize) {
    throw new MerkleError(`a tree of ${newSize} cannot be proven to extend one of ${oldSize}`);
  }
  const proof: LeafRange[] = [];
  const sub = (m: number, lo: number, hi: number, whole: boolean): void => {
    const n = hi - lo;
    if (m === n) {
      if (!whole) proof.push({ lo, hi });
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      sub(m, lo, lo + k, whole);
      proof.push({ lo: lo + k, hi });
    } else {
      sub(m - k, lo + k, hi, false);
      proof.push({ lo, hi: lo + k });
    }
  };
  sub(oldSize, 0, newSize, true);
  return proof;
}

/**
 * The hashes to store when `leaves` (their leaf hashes) are appended to a tree of `size`: each
 * leaf's, then each subtree it completes. Those completions need the hashes of the whole
 * subtrees at the tree's right edge, the frontier, left to right: `frontier`, read with
 * {@link frontierIndexes} (or kept from the append before). It works as a binary counter: a
 * leaf completes one subtree for each trailing 1 bit of its index, each the node of the
 * frontier's last subtree and the one just made. Returns the new hashes in stored order, from
 * stored index {@link storedCount}(size) on, and the new tree's frontier (its root is made of
 * it: {@link rootOfFrontier}).
 */
export function appendLeaves(
  sha256: Sha256,
  size: number,
  frontier: readonly Hash[],
  leaves: readonly Hash[],
): { readonly stored: Hash[]; readonly frontier: Hash[] } {
  if (leaves.length === 0) throw new MerkleError('nothing to append');
  if (frontier.length !== frontierLength(size)) {
    throw new MerkleError(
      `the frontier of a tree of ${size} is ${frontierLength(size)} hashes, not ${frontier.length}`,
    );
  }
  const stack = frontier.slice();
  const stored: Hash[] = [];
  for (let i = 0; i < leaves.length; i++) {
    let hash = leaves[i] as Hash;
    stored.push(hash);
    for (let m = size + i; odd(m); m = half(m)) {
      hash = nodeHash(sha256, stack.pop() as Hash, hash);
      stored.push(hash);
    }
    stack.push(hash);
  }
  return { stored, frontier: stack };
}

/** How many whole subtrees make the right edge of a tree of `size`: its 1 bits. */
function frontierLength(size: number): number {
  let bits = 0;
  for (let m = size; m > 0; m = half(m)) if (odd(m)) bits++;
  return bits;
}

/** The stored hashes appending to a tree of `size` reads: its frontier, at most log2(size) + 1, left to right. */
export const frontierIndexes = (size: number): number[] =>
  size === 0 ? [] : subtreesOf({ lo: 0, hi: size }).map(storedIndexOf);

/** The root of a tree from its frontier's hashes, left to right. */
export function rootOfFrontier(sha256: Sha256, frontier: readonly Hash[]): Hash {
  if (frontier.length === 0) throw new MerkleError('a tree needs at least one leaf');
  let hash = frontier[frontier.length - 1] as Hash;
  for (let i = frontier.length - 2; i >= 0; i--) hash = nodeHash(sha256, frontier[i] as Hash, hash);
  return hash;
}

/**
 * RFC 9162 §2.1.3.2: whether `proof` shows the leaf with hash `leaf` at `index` in the tree of
 * `size` leaves whose root is `root`.
 */
export function verifyInclusion(
  sha256: Sha256,
  index: number,
  size: number,
  leaf: Hash,
  proof: readonly Hash[],
  root: Hash,
): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let r = leaf;
  const reachesRoot = walkPath(index, size - 1, proof, (p, onLeft) => {
    r = onLeft ? nodeHash(sha256, p, r) : nodeHash(sha256, r, p);
  });
  return reachesRoot && sameHash(r, root);
}

/**
 * RFC 9162 §2.1.4.2: whether `proof` shows the tree of `newSize` leaves with root `newRoot`
 * extending the tree of `oldSize` with root `oldRoot`. Equal sizes need an empty proof and the
 * same root.
 */
export function verifyConsistency(
  sha256: Sha256,
  oldSize: number,
  newSize: number,
  oldRoot: Hash,
  newRoot: Hash,
  proof: readonly Hash[],
): boolean {
  if (!Number.isSafeInteger(oldSize) || !Number.isSafeInteger(newSize) || oldSize < 1 || oldSize > newSize) {
    return false;
  }
  if (oldSize === newSize) return proof.length === 0 && sameHash(oldRoot, newRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0] as Hash;
  let sr = path[0] as Hash;
  const reachesRoot = walkPath(fn, sn, path.slice(1), (c, onLeft) => {
    if (onLeft) fr = nodeHash(sha256, c, fr);
    sr = onLeft ? nodeHash(sha256, c, sr) : nodeHash(sha256, sr, c);
  });
  return reachesRoot && sameHash(fr, oldRoot) && sameHash(sr, newRoot);
}

/**
 * The walk up a proof's path that both verifications make (RFC 9162 §2.1.3.2, §2.1.4.2), from
 * node `fn` of a level whose last node is `sn`: each hash is taken in, on the left (`onLeft`)
 * or on the right as the RFC says. Whether the path ends at the root (neither longer nor shorter).
 */
function walkPath(
  fn: number,
  sn: number,
  path: readonly Hash[],
  take: (hash: Hash, onLeft: boolean) => void,
): boolean {
  for (const p of path) {
    if (sn === 0) return false;
    const onLeft = odd(fn) || fn === sn;
    take(p, onLeft);
    if (onLeft) {
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0;
}

/**
 * A tree kept as its frontier alone, grown a leaf at a time: what a walk over the records
 * needs to know each root it passes (memory log n, one node hash per leaf on average).
 */
export class Frontier {
  private readonly stack: Hash[];

  constructor(
    private readonly sha256: Sha256,
    private count = 0,
    frontier: readonly Hash[] = [],
  ) {
    if (frontier.length !== frontierLength(count)) {
      throw new MerkleError(
        `the frontier of a tree of ${count} is ${frontierLength(count)} hashes, not ${frontier.length}`,
      );
    }
    this.stack = frontier.slice();
  }

  get size(): number {
    return this.count;
  }

  push(leaf: Hash): void {
    let hash = leaf;
    for (let m = this.count; odd(m); m = half(m))
      hash = nodeHash(this.sha256, this.stack.pop() as Hash, hash);
    this.stack.push(hash);
    this.count++;
  }

  root(): Hash {
    return rootOfFrontier(this.sha256, this.stack);
  }
}
