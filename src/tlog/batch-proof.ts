/**
 * One proof for many leaves of one tree (decisions §23, ADR 27): the stored hashes that Go's
 * tlog.ProveRecord reads to prove each of the leaves, each hash once, in ascending stored
 * index. A verifier holding them proves every leaf with Go's sumdb/tlog alone (a HashReader
 * over them: ProveRecord, then CheckRecord), and a subject access answer of 100,000 disclosures
 * carries about 8 hashes a disclosure where one tlog-proof@v1 each would carry 24 and the
 * checkpoint.
 *
 * The hashes are planned by walking RFC 9162's tree once, left to right, visiting only the
 * ranges that hold a leaf of the batch. Of a range holding one, each half is needed (as Go's
 * proofs read it: a whole subtree's stored hash, or the pieces of the tree's right edge) when
 * the other half holds one, and both halves when the range itself is needed and is not whole.
 * The walk is in post-order, which is the stored hashes' own order, so the hashes can be read
 * and checked as a stream: {@link BatchProofCheck} computes the root from the leaves and the
 * hashes with a stack as deep as the tree, and a stored hash of a subtree that holds a leaf of
 * the batch (Go's proof of another leaf reads it) must be the hash the leaves below make.
 * Memory is the walk's stack, whatever the batch's size.
 */
import {
  type Hash,
  MerkleError,
  nodeHash,
  type Sha256,
  sameHash,
  splitPoint,
  storedIndexOf,
} from './merkle.js';

/** What the walk asks for next: a leaf of the batch, a stored hash given, a stored hash checked, or a node made of the two before. */
export const STEP = { done: 0, leaf: 1, given: 2, check: 3, node: 4 } as const;
type Step = (typeof STEP)[keyof typeof STEP];

const isPowerOfTwo = (n: number) => {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
};
const levelOf = (width: number) => Math.round(Math.log2(width));

/** The first position in `leaves[from..to)` whose leaf is at least `index` (the leaves ascending). */
function lowerBound(leaves: ArrayLike<number>, index: number, from: number, to: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((leaves[mid] as number) < index) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The leaves are ascending, distinct, and inside the tree. */
function checkLeaves(leaves: ArrayLike<number>, size: number): void {
  if (!Number.isSafeInteger(size) || size < 1)
    throw new MerkleError(`a tree needs at least one leaf, not ${size}`);
  if (leaves.length === 0) throw new MerkleError('a batch proof needs at least one leaf');
  let previous = -1;
  for (let i = 0; i < leaves.length; i++) {
    const leaf = leaves[i] as number;
    if (!Number.isSafeInteger(leaf) || leaf <= previous || leaf >= size) {
      throw new MerkleError(`leaf ${leaf} is not after leaf ${previous} in a tree of ${size}`);
    }
    previous = leaf;
  }
}

/** One range the walk is in: leaves [lo, hi), the batch's positions [a, b) inside it. */
interface Frame {
  lo: number;
  hi: number;
  a: number;
  b: number;
  needed: boolean;
  /** 0 entering; 1 left half done; 2 right half done; 3 the node made; 10 giving pieces. */
  state: number;
  mid: number;
  m: number;
  rightNeeded: boolean;
  /** For a range holding none of the batch: the next piece's first leaf, and the pieces given. */
  from: number;
  pieces: number;
}

/**
 * The walk: {@link next} gives each step in turn and sets {@link value} (the leaf's position in
 * the batch, or the stored index).
 */
export class BatchProofPlan {
  /** The step's leaf position or stored index. */
  value = 0;
  private readonly frames: Frame[] = [];
  private depth = 0;

  constructor(
    private readonly leaves: ArrayLike<number>,
    readonly size: number,
  ) {
    checkLeaves(leaves, size);
    this.enter(0, size, 0, leaves.length, false);
  }

  private enter(lo: number, hi: number, a: number, b: number, needed: boolean): void {
    let frame = this.frames[this.depth];
    if (frame === undefined) {
      frame = { lo, hi, a, b, needed, state: 0, mid: 0, m: 0, rightNeeded: false, from: lo, pieces: 0 };
      this.frames.push(frame);
    } else {
      frame.lo = lo;
      frame.hi = hi;
      frame.a = a;
      frame.b = b;
      frame.needed = needed;
      frame.state = 0;
      frame.from = lo;
      frame.pieces = 0;
    }
    this.depth++;
  }

  next(): Step {
    while (this.depth > 0) {
      const f = this.frames[this.depth - 1] as Frame;
      const width = f.hi - f.lo;
      if (f.state === 0) {
        if (f.a === f.b) {
          // None of the batch here: the range is needed (its sibling holds a leaf); its pieces.
          f.state = 10;
          continue;
        }
        if (width === 1) {
          f.state = 3;
          this.value = f.a;
          return STEP.leaf;
        }
        const k = splitPoint(width);
        const whole = isPowerOfTwo(width);
        f.mid = f.lo + k;
        f.m = lowerBound(this.leaves, f.mid, f.a, f.b);
        const leftHolds = f.m > f.a;
        const rightHolds = f.b > f.m;
        f.rightNeeded = leftHolds || (f.needed && !whole);
        f.state = 1;
        this.enter(f.lo, f.mid, f.a, f.m, rightHolds || (f.needed && !whole));
        continue;
      }
      if (f.state === 1) {
        f.state = 2;
        this.enter(f.mid, f.hi, f.m, f.b, f.rightNeeded);
        continue;
      }
      if (f.state === 2) {
        f.state = 3;
        return STEP.node;
      }
      if (f.state === 3) {
        this.depth--;
        if (f.needed && isPowerOfTwo(width)) {
          this.value = storedIndexOf({ level: levelOf(width), index: f.lo / width });
          return STEP.check;
        }
        continue;
      }
      // State 10: the pieces of a range holding none of the batch, left to right, then the
      // nodes that fold them from the right.
      if (f.from < f.hi) {
        const rest = f.hi - f.from;
        const piece = isPowerOfTwo(rest) && f.from % rest === 0 ? rest : splitPoint(rest);
        this.value = storedIndexOf({ level: levelOf(piece), index: f.from / piece });
        f.from += piece;
        f.pieces++;
        return STEP.given;
      }
      if (f.pieces > 1) {
        f.pieces--;
        return STEP.node;
      }
      this.depth--;
    }
    return STEP.done;
  }
}

/** The stored indexes a batch proof of `leaves` in the tree of `size` holds, ascending. */
export function* batchProofIndexes(leaves: ArrayLike<number>, size: number): Generator<number> {
  const plan = new BatchProofPlan(leaves, size);
  for (let step = plan.next(); step !== STEP.done; step = plan.next()) {
    if (step === STEP.given || step === STEP.check) yield plan.value;
  }
}

/** A batch proof that does not hold together: a stored hash not the one its leaves make, or hashes too few or too many. */
export class BatchProofError extends Error {
  override readonly name = 'BatchProofError';
}

/**
 * Checks a batch proof as its hashes come: {@link take} them in order (any number at a time),
 * then {@link root} is the root the leaves and the hashes make, to be compared with the signed
 * one. `leafHash(position)` is the hash of the batch's leaf at that position.
 */
export class BatchProofCheck {
  private readonly plan: BatchProofPlan;
  private readonly stack: Hash[] = [];
  /** The step waiting for a hash, or done. */
  private waiting: Step;

  constructor(
    private readonly sha256: Sha256,
    leaves: ArrayLike<number>,
    size: number,
    private readonly leafHash: (position: number) => Hash,
  ) {
    this.plan = new BatchProofPlan(leaves, size);
    this.waiting = this.run();
  }

  /** Runs the steps that need no hash; the step that does (given or check), or done. */
  private run(): Step {
    for (;;) {
      const step = this.plan.next();
      if (step === STEP.leaf) this.stack.push(this.leafHash(this.plan.value));
      else if (step === STEP.node) {
        const right = this.stack.pop() as Hash;
        const left = this.stack.pop() as Hash;
        this.stack.push(nodeHash(this.sha256, left, right));
      } else return step;
    }
  }

  /** The stored index of the next hash wanted, or undefined when no more are. */
  get wants(): number | undefined {
    return this.waiting === STEP.done ? undefined : this.plan.value;
  }

  /** The next hashes, in order. */
  take(hashes: Iterable<Hash>): void {
    for (const hash of hashes) {
      if (this.waiting === STEP.done)
        throw new BatchProofError('the proof holds more hashes than its leaves need');
      if (this.waiting === STEP.given) this.stack.push(hash);
      else if (!sameHash(this.stack.at(-1) as Hash, hash)) {
        throw new BatchProofError(
          `stored hash ${this.plan.value} is not the hash of the leaves below it: a leaf or a hash was changed`,
        );
      }
      this.waiting = this.run();
    }
  }

  /** The root, once every hash has been taken. */
  root(): Hash {
    if (this.waiting !== STEP.done) {
      throw new BatchProofError(
        `the proof ends before stored hash ${this.plan.value}, which its leaves need`,
      );
    }
    return this.stack[0] as Hash;
  }
}
