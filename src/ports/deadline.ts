/**
 * A request's deadline (decisions §11), as the ports see it: set when the request is admitted
 * and handed to the engine calls that can use it. The service answers at the deadline
 * whatever an engine does; an adapter that can give up on its own work then (cancel a
 * statement, abort an HTTP call, leave a record unwritten) reads it here.
 */
export interface Deadline {
  /** When the time is up, on the `performance.now()` clock (milliseconds). */
  readonly expiresAt: number;
  /** Aborted when the time is up. Made on first use: reading it costs an AbortController. */
  readonly signal: AbortSignal;
  /** True once the time is up: the request has been answered already, whatever comes next. */
  readonly passed: boolean;
}

/** `REQUEST_DEADLINE_MS` and `MAX_IN_FLIGHT` when not set (decisions §11). */
export const DEFAULT_REQUEST_DEADLINE_MS = 5000;
export const DEFAULT_MAX_IN_FLIGHT = 256;

/** Milliseconds left before `deadline`, 0 when it has passed. */
export const remainingMs = (deadline: Pick<Deadline, 'expiresAt'>, now = performance.now()): number =>
  Math.max(0, deadline.expiresAt - now);

/** Thrown (or rejected) by an adapter that gave up because the deadline passed. */
export class DeadlineExceededError extends Error {
  override readonly name = 'DeadlineExceededError';
  constructor(readonly engine: string) {
    super(`the ${engine} did not answer before the request's deadline`);
  }
}
