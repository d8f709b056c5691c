import { type Deadline, remainingMs } from '../../ports/deadline.js';

/**
 * How long one call to another service (the upstream, STS, AWS Private CA) may take: its own
 * timeout, or what is left of the request's deadline, whichever is sooner (decisions §11).
 */
export interface CallBudget {
  /**
   * Aborted (a `TimeoutError`, as `AbortSignal.timeout` aborts) when the time is up. A fresh
   * signal for this call alone: an SDK may set `onabort` on the signal it is given, which
   * must never be the deadline's own, shared by the request's other calls.
   */
  readonly signal: AbortSignal;
  /** True when the time ran out and it was the request's deadline, not the call's own timeout. */
  readonly byDeadline: boolean;
  /** The call is over: its timer is cleared, so nothing of the call outlives it. */
  end(): void;
}

/**
 * One timer for a call, for the sooner of `timeoutMs` and `deadline`; none at all (aborted
 * at once) when the deadline has passed. Cheaper than a timeout signal left to fire and
 * joined to the deadline's signal with `AbortSignal.any`, which Node keeps until both are done.
 */
export function callBudget(timeoutMs: number, deadline?: Pick<Deadline, 'expiresAt'>): CallBudget {
  const left = deadline === undefined ? Number.POSITIVE_INFINITY : remainingMs(deadline);
  const deadlineFirst = left <= timeoutMs;
  const controller = new AbortController();
  const expire = () => controller.abort(new DOMException('the call took too long', 'TimeoutError'));
  const ms = Math.min(timeoutMs, left);
  const timer = ms > 0 ? setTimeout(expire, ms) : undefined;
  if (timer === undefined) expire();
  return {
    signal: controller.signal,
    get byDeadline() {
      return deadlineFirst && controller.signal.aborted;
    },
    end: () => clearTimeout(timer),
  };
}
