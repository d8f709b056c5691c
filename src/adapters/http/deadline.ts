import { type Deadline, DeadlineExceededError } from '../../ports/deadline.js';

/**
 * The engines a request waits on, named as readiness names the stores, for the
 * `case_read_deadline_exceeded_total{engine}` metric and the log: which one held a request
 * past its deadline.
 */
export type Engine = 'accessStore' | 'rateLimitStore' | 'jwks' | 'caseStore' | 'credentials' | 'auditStore';

/** What a request's outcome is when its deadline won. */
export const EXPIRED: unique symbol = Symbol('deadline expired');

/**
 * One request's deadline (decisions §11). The request notes the engine it is waiting on as it
 * goes (a field write, nothing more), so whatever held it is named. While it waits, `wake`
 * is what its deadline calls when it passes. Its AbortSignal, for an adapter that can cancel
 * its own work, is made only when one asks for it.
 */
export class RequestDeadline implements Deadline {
  /** The engine the request waits on now. */
  engine: Engine | undefined = undefined;
  /** True once the time is up. */
  passed = false;
  /** Called with {@link EXPIRED} when the time is up, if set. */
  wake: ((outcome: typeof EXPIRED) => void) | undefined = undefined;
  /** Its neighbours among the deadlines running (see {@link Deadlines}). */
  older: RequestDeadline | undefined = undefined;
  newer: RequestDeadline | undefined = undefined;
  running = true;
  private controller: AbortController | undefined;

  constructor(readonly expiresAt: number) {}

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.passed && !this.controller.signal.aborted) this.controller.abort(this.reason());
    return this.controller.signal;
  }

  /** Races `work` against this deadline: its result, or {@link EXPIRED}; a rejection is the outcome too. */
  race<T>(work: Promise<T>): Promise<T | typeof EXPIRED | unknown> {
    if (this.passed) return Promise.resolve(EXPIRED);
    return new Promise((resolve) => {
      this.wake = resolve;
      work.then(resolve, resolve);
    });
  }

  expire(): void {
    if (this.passed) return;
    this.passed = true;
    this.controller?.abort(this.reason());
    this.wake?.(EXPIRED);
  }

  private reason(): DeadlineExceededError {
    return new DeadlineExceededError(this.engine ?? 'request');
  }
}

/**
 * The deadlines of the requests in flight, with one timer for all of them. Every request
 * gets the same time, so they expire in the order they started: a list, oldest first, and a
 * timer set for the oldest. Starting and settling a request are a few pointer writes; no
 * timer is made, cleared or left per request, so nothing of a request outlives it on its
 * connection.
 */
export class Deadlines {
  private oldest: RequestDeadline | undefined;
  private newest: RequestDeadline | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly ms: number) {}

  start(startedAt: number): RequestDeadline {
    const deadline = new RequestDeadline(startedAt + this.ms);
    deadline.older = this.newest;
    if (this.newest) this.newest.newer = deadline;
    else this.oldest = deadline;
    this.newest = deadline;
    if (this.timer === undefined) this.arm(deadline.expiresAt);
    return deadline;
  }

  /** The request is done: its deadline leaves the list (the timer is moved on when it fires). */
  settle(deadline: RequestDeadline): void {
    deadline.wake = undefined;
    this.unlink(deadline);
  }

  private unlink(deadline: RequestDeadline): void {
    if (!deadline.running) return;
    deadline.running = false;
    const { older, newer } = deadline;
    if (older) older.newer = newer;
    else this.oldest = newer;
    if (newer) newer.older = older;
    else this.newest = older;
    deadline.older = undefined;
    deadline.newer = undefined;
  }

  private arm(at: number): void {
    this.timer = setTimeout(this.tick, Math.max(0, at - performance.now()));
    this.timer.unref?.();
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    // A timer may fire a moment early: within a millisecond counts as passed.
    const now = performance.now() + 1;
    for (let d = this.oldest; d !== undefined && d.expiresAt <= now; d = this.oldest) {
      this.unlink(d);
      d.expire();
    }
    if (this.oldest) this.arm(this.oldest.expiresAt);
  };
}

/**
 * How many requests wait on engines at once, at most `max` (decisions §11): one more is
 * refused at once (503 `overloaded`), before it costs an engine call.
 */
export class InFlight {
  private count = 0;
  constructor(readonly max: number) {}

  /** Takes a place; false (and nothing taken) when all `max` are taken. */
  enter(): boolean {
    if (this.count >= this.max) return false;
    this.count++;
    return true;
  }

  leave(): void {
    this.count--;
  }

  get size(): number {
    return this.count;
  }
}
