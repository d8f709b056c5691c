import type { Hash } from '../tlog/merkle.js';

/**
 * What a witness (`case-read witness serve`, C2SP tlog-witness) keeps: for each log it
 * cosigns, by origin, the latest checkpoint it cosigned. A witness never cosigns a checkpoint
 * that does not extend this one, so the record only ever grows, and checking it and writing
 * the next must be one atomic step (the spec's race: two requests checked against size N,
 * the larger written first, the smaller after it, rolling the log back).
 */

/** The latest checkpoint a witness cosigned for one log. */
export interface WitnessedCheckpoint {
  /** The tree size. */
  readonly size: number;
  /** The tree's root hash (32 bytes). */
  readonly root: Hash;
  /**
   * The checkpoint as cosigned: its text, the log's signatures the witness verified and the
   * witness's own cosignature (tlog-witness's monitoring retrieval serves it).
   */
  readonly note: string;
}

/** Where a log stood when the witness checked a submission against it: nothing held, or a size and root. */
export type WitnessedHead = Pick<WitnessedCheckpoint, 'size' | 'root'> | undefined;

/** The witness's record of the logs it cosigns. Every store of it is shared safely by several witness processes. */
export interface WitnessState {
  /** The latest checkpoint cosigned for `origin`, or undefined when none ever was. */
  latest(origin: string): Promise<WitnessedCheckpoint | undefined>;
  /**
   * Records `next` as the latest checkpoint for `origin` if, and only if, the record is still
   * `expected` (the same size and root; `undefined`: nothing recorded yet), in one atomic
   * step: of two calls from the same `expected`, one resolves `true`, the other with the
   * record the first wrote. Resolves once the record is durable.
   */
  advance(
    origin: string,
    expected: WitnessedHead,
    next: WitnessedCheckpoint,
  ): Promise<true | WitnessedCheckpoint | undefined>;
  /** Where the record is kept, for the start-up log line (a password masked). */
  readonly description: string;
  close(): Promise<void>;
}
