import type { ArchiveLock, ArchiveLockHolder, AuditLog } from '../../ports/audit-log.js';
import { AuditArchiveError } from './archive.js';

/**
 * One archive of a trail at a time (decisions §18): the store's archive lock, held by a run
 * from before it reads the archive's checkpoint until after the store let go of what the
 * archive holds. A second run is refused, naming the one that holds it; a run that lost it
 * (a lapsed lease, a lost connection) stops before it replaces the checkpoint or lets go
 * (archive.ts's stillHolding).
 */

/** Another run holds the trail's archive lock: this one wrote nothing and let go of nothing. */
export class ArchiveBusyError extends AuditArchiveError {
  constructor(readonly holder: ArchiveLockHolder) {
    super(
      `another archive of this trail is running (${holder.who}, since ${holder.since.toISOString()}): this run wrote nothing and let go of nothing; run it again once that one has ended`,
    );
  }
}

/** Runs `work` holding `log`'s archive lock as `who`, released after it, whatever it did. */
export async function underArchiveLock<T>(
  log: AuditLog,
  who: string,
  work: (lock: ArchiveLock) => Promise<T>,
): Promise<T> {
  const taken = await log.lockArchive(who);
  if ('busy' in taken) throw new ArchiveBusyError(taken.busy);
  try {
    return await work(taken.held);
  } finally {
    await taken.held.release();
  }
}
