import { type Deadline, DeadlineExceededError } from '../../ports/deadline.js';

/** How early a store's timer may say a deadline passed. */
const TIMER_SLACK_MS = 5;

interface Waiting<T> {
  readonly item: T;
  /** When the item's request stops waiting for it (`performance.now()` ms); none for an item with no deadline. */
  readonly expiresAt: number | undefined;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Until when a batch's write may run: the earliest deadline among its items (on the
 * `performance.now()` clock), or `undefined` when none has one. A store that can stop its
 * write then (cancel a statement, stop waiting for a lock) does, never begins one after it,
 * and throws {@link DeadlineExceededError}.
 */
export type WriteBudget = number | undefined;

/** Milliseconds left of a budget, at least 1; `undefined` for none. */
export const budgetLeftMs = (budget: WriteBudget): number | undefined =>
  budget === undefined ? undefined : Math.max(1, Math.ceil(budget - performance.now()));

/**
 * Group commit, for the audit stores: the items appended in one event-loop turn are written
 * together at its end, and while a write is under way the items appended meanwhile wait
 * and go together in the next one. Each `append` resolves only once its own batch was
 * written, and rejects when that write failed: nothing is acknowledged that was not stored.
 * Under load one write carries many items instead of each paying for its own.
 *
 * Deadlines (decisions §11): an item whose request's deadline passed before its write began
 * is never written (it rejects), so a request answered 503 at its deadline leaves no record
 * claiming otherwise. A write is given until the earliest deadline of its batch; when the
 * store gives up there, the items whose deadline passed reject, and the others go back to
 * the head of the queue for the next write.
 */
export class GroupCommit<T> {
  private pending: Waiting<T>[] = [];
  private running: Promise<void> | undefined;

  /**
   * `write` stores a batch whole or not at all; it throws (or rejects) when it could not, a
   * {@link DeadlineExceededError} when it gave up at `until`. `what` names the store.
   */
  constructor(
    private readonly write: (batch: readonly T[], until: WriteBudget) => void | Promise<void>,
    private readonly what = 'audit store',
  ) {}

  append(item: T, deadline?: Pick<Deadline, 'expiresAt'>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, expiresAt: deadline?.expiresAt, resolve, reject });
      this.running ??= this.run();
    });
  }

  /** Resolves once everything appended so far has been written, or has failed. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Writes what is pending now, for a store whose `write` is synchronous and that closes
   * synchronously; a store whose `write` is asynchronous awaits {@link drain} instead.
   */
  flushNow(): void {
    void this.writeBatch();
  }

  private async run(): Promise<void> {
    // Let the rest of this event-loop turn append too.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) await this.writeBatch();
    this.running = undefined;
  }

  /** The pending items still worth writing; those past their deadline are rejected here. */
  private takeBatch(): { batch: Waiting<T>[]; until: WriteBudget } {
    const now = performance.now();
    const batch: Waiting<T>[] = [];
    let earliest = Number.POSITIVE_INFINITY;
    for (const waiting of this.pending) {
      if (waiting.expiresAt === undefined) batch.push(waiting);
      else if (waiting.expiresAt <= now) waiting.reject(new DeadlineExceededError(this.what));
      else {
        batch.push(waiting);
        if (waiting.expiresAt < earliest) earliest = waiting.expiresAt;
      }
    }
    this.pending = [];
    return { batch, until: earliest === Number.POSITIVE_INFINITY ? undefined : earliest };
  }

  private writeBatch(): Promise<void> | undefined {
    const { batch, until } = this.takeBatch();
    if (batch.length === 0) return undefined;
    const resolveAll = () => {
      for (const { resolve } of batch) resolve();
    };
    const failed = (error: unknown) => this.failed(batch, error);
    let written: void | Promise<void>;
    try {
      written = this.write(
        batch.map((w) => w.item),
        until,
      );
    } catch (error) {
      failed(error);
      return undefined;
    }
    if (written === undefined) {
      resolveAll();
      return undefined;
    }
    return written.then(resolveAll, failed);
  }

  /**
   * A write that failed: every item rejects, unless the store gave up at the batch's
   * deadline, when the items with time left go back to be written next.
   */
  private failed(batch: readonly Waiting<T>[], error: unknown): void {
    // A timer may fire a millisecond before the clock says the deadline passed.
    const now = performance.now() + TIMER_SLACK_MS;
    const retry =
      error instanceof DeadlineExceededError
        ? batch.filter((w) => w.expiresAt === undefined || w.expiresAt > now)
        : [];
    // None had its deadline pass: the store gave up early, and the batch fails whole.
    const again = retry.length < batch.length ? retry : [];
    for (const waiting of batch) if (!again.includes(waiting)) waiting.reject(error);
    this.pending = [...again, ...this.pending];
  }
}
