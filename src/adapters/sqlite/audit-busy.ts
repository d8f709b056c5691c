// Writing to a SQLite audit store other processes write to as well: a write held off by
// another writer's lock is tried again a moment later, never waited for inside SQLite.
import { DeadlineExceededError } from '../../ports/deadline.js';
import { StoreError } from '../../ports/stores.js';
import { BUSY_TIMEOUT_MS, sqliteErrorCode } from './driver.js';

/** How soon a write held by another writer's lock is tried again. */
const BUSY_RETRY_MS = 10;

/**
 * Runs `work`, a synchronous write; while SQLite answers SQLITE_BUSY (another writer holds the
 * lock), again every {@link BUSY_RETRY_MS} until `until` (`performance.now()` ms), never
 * blocking the event loop in between and never beginning after `until`. Then: a
 * DeadlineExceededError when `until` was a request's deadline, the busy error otherwise.
 */
export function whenNotBusy(work: () => void, until: number, isDeadline: boolean): void | Promise<void> {
  const attempt = (): boolean => {
    if (performance.now() >= until) {
      throw isDeadline
        ? new DeadlineExceededError('audit store')
        : new StoreError('the audit store is locked by another writer');
    }
    try {
      work();
      return true;
    } catch (error) {
      if (sqliteErrorCode(error) !== 'SQLITE_BUSY') throw error;
      return false;
    }
  };
  if (attempt()) return;
  return (async () => {
    do {
      await new Promise((resolve) => setTimeout(resolve, Math.min(BUSY_RETRY_MS, until - performance.now())));
    } while (!attempt());
  })();
}

/**
 * A write (synchronous) run once no other writer holds the lock: asked again while one does,
 * as an append is, for up to the busy timeout.
 */
export async function writeWhenFree<T>(work: () => T): Promise<T> {
  let done: T | undefined;
  await whenNotBusy(
    () => {
      done = work();
    },
    performance.now() + BUSY_TIMEOUT_MS,
    false,
  );
  return done as T;
}
