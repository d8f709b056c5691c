import type { TimeWindow } from './audit-log.js';
import type { Deadline } from './deadline.js';

/**
 * The disclosures of one person's data (decisions §22, §23): the audit records naming their
 * crn, from the store and the archive, each with its exact bytes, and one proof of them all in
 * the trail (ADR 27). The adapter (src/app/audit/disclosures.ts) reads them through the
 * indexes by crn.
 */

/** One audit record naming the crn, as a subject access request answers it. */
export interface Disclosure {
  /** When it was answered (ISO 8601, UTC). */
  readonly time: string;
  readonly requestId: string;
  /** The operation (`getCase`, …). */
  readonly operation: string;
  /** The client that received the answer. */
  readonly recipient: string;
  /** The verified e-mail of the person it acted for, or null (the client itself). */
  readonly onBehalfOf: string | null;
  readonly status: number;
  /** The record's leaf index in the log's tree (its seq − 1). */
  readonly index: number;
  /** Base64 of the record's exact bytes: the log's entry, its leaf. */
  readonly entry: string;
}

/**
 * A stretch of time whose audit records were lost from the trail (a restore from backup, a
 * failover to a standby behind: ADR 30), as the trail's signed continuation statement says it
 * (`case-read audit continue`). The lost records cannot be read, so whether any named the crn
 * cannot be known: a subject access answer states every loss that meets its window.
 */
export interface TrailGap {
  /** When the last record kept before the loss was written (ISO 8601, UTC); null when none was kept (the trail's start). */
  readonly from: string | null;
  /** When the trail was continued after the loss (ISO 8601, UTC): the lost records were written before it. */
  readonly to: string;
  /** How many records were lost (those the previous log's witnesses held, less those kept). */
  readonly recordsLost: number;
  /** Why, as the operator stated it when continuing the trail. */
  readonly reason: string;
}

/**
 * What an answer is sent as, in order: the disclosures a batch at a time, then the proof's
 * hashes a piece at a time (each piece a whole number of hashes, three at a time but the last,
 * so that their base64 can be written end to end).
 */
export type DisclosurePart =
  | { readonly disclosures: readonly Disclosure[] }
  /** Valid until the next part is asked for: written out (as base64) at once. */
  | { readonly hashes: Uint8Array };

/**
 * Every disclosure of one crn inside a window, checked whole before any is given: {@link
 * Disclosures.of} reads and proves them all (or rejects with a TrailIncompleteError), then
 * {@link parts} reads them again to be sent, in bounded memory.
 */
export interface DisclosureList {
  /** How many there are. */
  readonly count: number;
  /**
   * The trail's losses that meet the window, oldest first: each opened from its signed
   * continuation record (one that cannot be read or does not verify is a TrailIncompleteError,
   * never an answer that hides a loss). Not proved by the answer's proof, which covers the
   * disclosures only; `case-read audit verify` checks the statements.
   */
  readonly gaps: readonly TrailGap[];
  /**
   * The signed checkpoint every disclosure is proved against (a C2SP tlog-checkpoint note with
   * the cosignatures held for it); undefined when there are none.
   */
  readonly checkpoint: string | undefined;
  /**
   * The disclosures, oldest first, then the proof's hashes: the stored hashes Go's
   * tlog.ProveRecord reads to prove every disclosure's index in the checkpoint's tree, each
   * once, in ascending stored index (src/tlog/batch-proof.ts). It throws when what it reads
   * again is not what was checked (the trail changed under it, or no longer makes the signed
   * root): the answer is then broken off, never completed.
   */
  parts(): AsyncIterable<DisclosurePart>;
}

export interface Disclosures {
  /**
   * The disclosures of `crn` in `window`, every one read from the store or the archive and the
   * proof of them all checked against the signed root, and the trail's losses that meet the
   * window; rejects with a TrailIncompleteError
   * naming why when any cannot be read or verified (never a shorter list), and with a
   * StoreUnavailableError (or the deadline's error) when the store fails.
   */
  of(crn: string, window: TimeWindow, deadline?: Deadline): Promise<DisclosureList>;
}
