/**
 * The witnesses a trail's checkpoints are submitted to (decisions §19; C2SP tlog-witness
 * v1.0.0 `add-checkpoint`). The body sent and the lines answered are the log module's formats
 * (src/tlog/witness-protocol.ts); this port only carries them.
 */

/** What a witness answered to one `add-checkpoint`. */
export type WitnessAnswer =
  /** 200: its cosignature lines, unchecked (the caller verifies them against the witness's key). */
  | { readonly kind: 'cosigned'; readonly body: string }
  /** 409 with a `text/x.tlog.size` body: the size the witness holds is not the `old` sent. */
  | { readonly kind: 'conflict'; readonly size: number }
  /** Any other answer of the witness's own (400, 403, 404, 422, a 409 without its size, …): it would not cosign. */
  | { readonly kind: 'refused'; readonly status: number; readonly detail: string }
  /** No answer in time, a connection that failed, or a 5xx: tried again later. */
  | { readonly kind: 'unreachable'; readonly reason: string };

export interface WitnessClient {
  /**
   * POSTs `body` to `<submissionPrefix>/add-checkpoint`, given up when `signal` aborts (its
   * deadline, or shutdown); never throws: every failure is an answer.
   */
  addCheckpoint(submissionPrefix: string, body: string, signal: AbortSignal): Promise<WitnessAnswer>;
  /** Closes its connections. */
  close(): Promise<void>;
}
