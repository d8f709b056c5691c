interface Waiting<T> {
  readonly item: T;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit, for the audit stores: the items appended in one event-loop turn are written
 * together at its end, and while a write is under way the items appended meanwhile wait
 * and go together in the next one. Each `append` resolves only once its own batch was
 * written, and rejects when that write failed: nothing is acknowledged that was not stored.
 * Under load one write carries many items instead of each paying for its own.
 */
export class GroupCommit<T> {
  private pending: Waiting<T>[] = [];
  private running: Promise<void> | undefined;

  /** `write` stores a batch whole or not at all; it throws (or rejects) when it could not. */
  constructor(private readonly write: (batch: readonly T[]) => void | Promise<void>) {}

  append(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
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

  private writeBatch(): Promise<void> | undefined {
    const batch = this.pending;
    if (batch.length === 0) return undefined;
    this.pending = [];
    const resolveAll = () => {
      for (const { resolve } of batch) resolve();
    };
    const rejectAll = (error: unknown) => {
      for (const { reject } of batch) reject(error);
    };
    let written: void | Promise<void>;
    try {
      written = this.write(batch.map((w) => w.item));
    } catch (error) {
      rejectAll(error);
      return undefined;
    }
    if (written === undefined) {
      resolveAll();
      return undefined;
    }
    return written.then(resolveAll, rejectAll);
  }
}
