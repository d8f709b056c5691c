import type { AuditRecord } from '../../domain/audit/record.js';
import type { AuditWriter } from '../../ports/audit-log.js';
import type { HttpLogger } from './env.js';

/** How often the record of an answer already given is tried (about two minutes in all). */
const ATTEMPTS = 8;
/** How many such records may wait at once: a store refusing everything must not fill memory. */
const MAX_WAITING = 10_000;

/** One record waiting: its request, its attempts running, and the wake-up of the pause before its next. */
interface Waiting {
  readonly requestId: string;
  run?: Promise<void>;
  wake?: () => void;
  lost: boolean;
}

/**
 * The records of answers already given (a refusal at the deadline, an `answer-withheld`
 * correction: decisions §11, §18), appended without holding the answer: tried again while the
 * store refuses, a second, then twice as long each time up to half a minute, about two minutes
 * in all; each refusal logged (its request id, never the crn), never thrown. They are part of
 * the drain at shutdown ({@link settle}): tried until the grace ends, then each one still not
 * stored counted and logged as lost, so a record never goes without a trace.
 */
export class LateAppends {
  private readonly waiting = new Set<Waiting>();
  /** Set by {@link settle}: when the grace ends (performance.now() ms); no pause runs past it. */
  private until: number | undefined;
  /** Records given up so far. */
  private given = 0;

  constructor(
    private readonly options: {
      readonly audit: AuditWriter | undefined;
      readonly logger: HttpLogger;
      /** Called for each record that could not be stored. */
      readonly lost: () => void;
    },
  ) {}

  /** Appends `record` later, without holding the caller. */
  add(record: AuditRecord): void {
    this.follow(record.requestId, Promise.resolve(), () => record);
  }

  /**
   * Appends the record `next` makes once `first` settles (the request's own append, still in
   * the store's hands when its answer was given at the deadline): whether `first` was stored
   * decides what the record says. It waits here from this call on, so the drain counts it
   * whatever holds `first` (a store's queue behind a write that waits for a lock): stored, or
   * logged and counted as lost, never neither.
   */
  follow(requestId: string, first: Promise<unknown>, next: (firstStored: boolean) => AuditRecord): void {
    const { logger, lost } = this.options;
    if (this.waiting.size >= MAX_WAITING || (this.until !== undefined && performance.now() >= this.until)) {
      this.given++;
      lost();
      logger.error(
        { requestId },
        this.until === undefined
          ? 'audit record could not be written: too many waiting'
          : 'audit record lost at shutdown: not stored within SHUTDOWN_GRACE_MS',
      );
      return;
    }
    const waiting: Waiting = { requestId, lost: false };
    this.waiting.add(waiting);
    waiting.run = first
      .then(
        () => true,
        () => false,
      )
      .then((stored) => (waiting.lost ? undefined : this.store(next(stored), waiting)))
      .finally(() => this.waiting.delete(waiting));
  }

  private async store(record: AuditRecord, waiting: Waiting): Promise<void> {
    const { audit, logger, lost } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        await audit?.append(record);
        return;
      } catch (error) {
        if (waiting.lost) return;
        const last =
          attempt === ATTEMPTS - 1 || (this.until !== undefined && performance.now() >= this.until);
        logger.error(
          {
            requestId: record.requestId,
            err: { name: (error as Error).name, message: (error as Error).message },
          },
          last ? 'audit record could not be written' : 'audit record could not be written yet; trying again',
        );
        if (last) {
          waiting.lost = true;
          this.given++;
          lost();
          return;
        }
        await this.pause(waiting, Math.min(30_000, 1000 * 2 ** attempt));
        if (waiting.lost) return;
      }
    }
  }

  /** Waits `ms`, or less: never past the grace's end, and woken at once when the grace ends. */
  private pause(waiting: Waiting, ms: number): Promise<void> {
    const left = this.until === undefined ? ms : Math.max(0, Math.min(ms, this.until - performance.now()));
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, left);
      waiting.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * Part of the drain: the records waiting are tried until `until` (performance.now() ms, the
   * end of the shutdown's grace), their pauses cut short to fit; each one not stored by then
   * is counted and logged as lost, with its request id, and given up. Resolves by `until`.
   */
  async settle(until: number): Promise<{ readonly waiting: number; readonly lost: number }> {
    this.until = until;
    const before = { waiting: this.waiting.size, given: this.given };
    // Each pause is shortened to the grace: woken, it pauses again for what is left at most.
    for (const waiting of this.waiting) waiting.wake?.();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.waiting].map((waiting) => waiting.run)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, until - performance.now()));
      }),
    ]);
    clearTimeout(timer);
    for (const waiting of [...this.waiting]) {
      if (waiting.lost) continue;
      waiting.lost = true;
      waiting.wake?.();
      this.given++;
      this.options.lost();
      this.options.logger.error(
        { requestId: waiting.requestId },
        'audit record lost at shutdown: not stored within SHUTDOWN_GRACE_MS',
      );
    }
    return { waiting: before.waiting, lost: this.given - before.given };
  }
}
