import type { TimeWindow } from './audit-log.js';
import type { Deadline } from './deadline.js';

/**
 * The disclosures of one person's data (decisions §22): the audit records naming their crn,
 * from the store and the archive, each with its exact bytes and its proof in the trail. The
 * adapter (src/app/audit/disclosures.ts) reads them through the indexes by crn.
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
  /** Base64 of the record's exact bytes: the log's entry, its leaf. */
  readonly entry: string;
  /** A C2SP tlog-proof@v1 of the entry against a signed checkpoint (with the cosignatures held for it). */
  readonly proof: string;
}

/**
 * Every disclosure of one crn inside a window, checked whole before any is given: {@link
 * Disclosures.of} reads and verifies them all (or rejects with a TrailIncompleteError), then
 * `batches` reads them again to be sent, a batch at a time, in bounded memory.
 */
export interface DisclosureList {
  /** How many there are. */
  readonly count: number;
  /**
   * The disclosures, oldest first, a batch at a time. It throws when what it reads again is
   * not what was checked (the trail changed under it): the answer is then broken off, never
   * completed shorter.
   */
  batches(): AsyncIterable<readonly Disclosure[]>;
}

export interface Disclosures {
  /**
   * The disclosures of `crn` in `window`, every one read from the store or the archive and its
   * proof checked against the signed root; rejects with a TrailIncompleteError naming why when
   * any cannot be read or verified (never a shorter list), and with a StoreUnavailableError
   * (or the deadline's error) when the store fails.
   */
  of(crn: string, window: TimeWindow, deadline?: Deadline): Promise<DisclosureList>;
}
