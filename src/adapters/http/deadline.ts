import { type Deadline, DeadlineExceededError } from '../../ports/deadline.js';

/**
 * The engines a request waits on, named as readiness names the stores, for the
 * `case_read_deadline_exceeded_total{engine}` metric and the log: which one held a request
 * past its deadline.
 */
export type Engine = 'accessStore' | 'rateLimitStore' | 'jwks' | 'caseStore' | 'credentials' | 'auditStore';

/** What `expired` resolves to: the deadline won the race. */
export const EXPIRED: unique symbol = Symbol('deadline expired');

function expire(deadline: RequestDeadline): void {
  deadline.expire();
}

/**
 * One request's deadline (decisions §11): a timer set when the request is admitted, which
 * the request cycle races the handler and the audit append against. The request notes the
 * engine it is waiting on as it goes (a field write, nothing more), so whatever held it is
 * named. Its AbortSignal, for an adapter that can cancel its own work, is made only when
 * one asks for it. `settle` clears the timer when the request is done: nothing of the
 * request outlives it on the connection.
 */
export class RequestDeadline implements Deadline {
  /** The engine the request waits on now. */
  engine: Engine | undefined = undefined;
  /** True once the time is up. */
  passed = false;
  readonly expiresAt: number;
  /** Resolves with {@link EXPIRED} when the time is up; never rejects. */
  readonly expired: Promise<typeof EXPIRED>;
  private fire!: (value: typeof EXPIRED) => void;
  private controller: AbortController | undefined;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(startedAt: number, ms: number) {
    this.expiresAt = startedAt + ms;
    this.expired = new Promise((resolve) => {
      this.fire = resolve;
    });
    this.timer = setTimeout(expire, ms, this);
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.passed && !this.controller.signal.aborted) this.controller.abort(this.reason());
    return this.controller.signal;
  }

  expire(): void {
    if (this.passed) return;
    this.passed = true;
    this.fire(EXPIRED);
    this.controller?.abort(this.reason());
  }

  /** The request is done: the timer goes with it. */
  settle(): void {
    clearTimeout(this.timer);
  }

  private reason(): DeadlineExceededError {
    return new DeadlineExceededError(this.engine ?? 'request');
  }
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
