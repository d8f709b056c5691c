/**
 * The one proof builder (Go's tlog.ProveRecord and ProveTree over a HashReader; Tessera's one
 * prover over any tile source): a proof's hashes are planned here (merkle.ts), read from a
 * {@link HashSource} (a store's table of stored hashes, an archive's hash tiles, …), made into
 * the proof, and the proof checked against the signed roots before it is handed out. Where the
 * hashes are kept is the source's business; how a proof is made of them is only here.
 */
import {
  consistencyRanges,
  type Hash,
  inclusionRanges,
  type LeafRange,
  rangeHashes,
  rootRange,
  type Sha256,
  type Subtree,
  storedCount,
  storedIndexOf,
  subtreesOf,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js';

/** Where a tree's stored hashes are read from (Go's tlog.HashReader). */
export interface HashSource {
  /**
   * The hashes at the stored `indexes` ({@link storedIndexOf}), by index. `indexes` come in the
   * order the proof needs them, each once; a source may read them in any order. One it cannot
   * give it refuses, saying why (or leaves out: the proof then names it).
   */
  hashes(indexes: readonly number[]): Promise<ReadonlyMap<number, Hash>>;
}

/** The whole subtree whose hash is stored at `index`: the inverse of {@link storedIndexOf} (Go's SplitStoredHashIndex). */
export function storedSubtreeOf(index: number): Subtree {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`${index} is not a stored index`);
  // Leaf n's hashes are stored from storedCount(n) on: the leaf, then each subtree it completes.
  // storedCount(n) = 2n − popcount(n) ≤ 2n, so the leaf is at least index / 2.
  let leaf = Math.floor(index / 2);
  while (storedCount(leaf + 1) <= index) leaf++;
  const level = index - storedCount(leaf);
  return { level, index: Math.floor(leaf / 2 ** level) };
}

/** The stored indexes `ranges` are made of, each once, in the order the ranges need them. */
function indexesFor(ranges: readonly LeafRange[]): number[] {
  const wanted = new Set<number>();
  for (const range of ranges) for (const piece of subtreesOf(range)) wanted.add(storedIndexOf(piece));
  return [...wanted];
}

/** The hash of each of `ranges` (a proof's, or a root's), made of the hashes `source` holds. */
export async function proofHashes(
  sha256: Sha256,
  source: HashSource,
  ranges: readonly LeafRange[],
): Promise<Hash[]> {
  return rangeHashes(sha256, ranges, await source.hashes(indexesFor(ranges)));
}

/** The root of the tree of the first `size` leaves, made of the hashes `source` holds. */
export async function rootFrom(sha256: Sha256, source: HashSource, size: number): Promise<Hash> {
  return (await proofHashes(sha256, source, rootRange(size)))[0] as Hash;
}

/** What a proof is asked to show, and the signed roots it must show it against. */
export type ProofAsked =
  /** Leaf `inclusion` (whose hash is `leaf`) is in the tree of `size` leaves whose root is `root`. */
  | { readonly inclusion: number; readonly leaf: Hash; readonly size: number; readonly root: Hash }
  /** The tree of `size` leaves (root `roots.new`) extends the tree of `consistency` leaves (root `roots.old`). */
  | {
      readonly consistency: number;
      readonly size: number;
      readonly roots: { readonly old: Hash; readonly new: Hash };
    };

/**
 * Builds the proof `asked` from `source`'s hashes and checks it (RFC 9162 §2.1.3.2, §2.1.4.2)
 * before it is given: the proof's hashes, or undefined when they do not show what was asked
 * (the source holds another tree than the one signed). A consistency proof handed out is
 * checked too: against the old tree's root as the source makes it ({@link rootFrom}) and the
 * signed new root, every hash of the proof is bound to the signature.
 */
export async function proveFrom(
  sha256: Sha256,
  source: HashSource,
  asked: ProofAsked,
): Promise<Hash[] | undefined> {
  if ('inclusion' in asked) {
    const proof = await proofHashes(sha256, source, inclusionRanges(asked.inclusion, asked.size));
    return verifyInclusion(sha256, asked.inclusion, asked.size, asked.leaf, proof, asked.root)
      ? proof
      : undefined;
  }
  const { consistency, size, roots } = asked;
  const proof = await proofHashes(sha256, source, consistencyRanges(consistency, size));
  return verifyConsistency(sha256, consistency, size, roots.old, roots.new, proof) ? proof : undefined;
}
