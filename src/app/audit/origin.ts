import type { AuditCheckpointStore } from '../../ports/audit-log.js';
import { checkpointBodyOf } from '../../tlog/note.js';

/**
 * A log keeps its name for life (decisions §18): the origin its checkpoints name is the log's
 * identity to every verifier, so a trail's checkpoints all name one. `serve`, `audit archive`
 * and the proof commands compare the origin they were given with the one the trail's newest
 * checkpoint names, and refuse another, naming both: a new origin is a new trail.
 */

/** The origin given differs from the trail's; both named, and what to do. */
export class OriginMismatchError extends Error {
  override readonly name = 'OriginMismatchError';
  constructor(
    readonly given: string,
    readonly trail: string,
    /** Where the origin given came from: `AUDIT_ORIGIN`, `--origin`, `--vkey`. */
    readonly source: string,
  ) {
    super(
      `${source} names the log ${given}, but this trail's newest checkpoint names it ${trail}: a log keeps its origin for life. Give ${trail} (${source === 'AUDIT_ORIGIN' ? `AUDIT_ORIGIN=${trail}` : source}); a new origin means a new trail (a new audit store, and a new archive directory), or, after the store lost records its witnesses hold, case-read audit continue`,
    );
  }
}

/**
 * The origin the trail's newest checkpoint names, or undefined before its first. Its
 * signature is not checked here: the name is compared, never trusted (whoever reads the
 * checkpoint opens it with its keys).
 */
export async function trailOrigin(
  log: Pick<AuditCheckpointStore, 'newestCheckpoint'>,
): Promise<string | undefined> {
  const newest = await log.newestCheckpoint({ withNote: true });
  const body = newest?.note === undefined ? undefined : checkpointBodyOf(newest.note);
  return body === undefined || 'invalid' in body ? undefined : body.origin;
}

/** Refuses `given` (from `source`) when the trail's newest checkpoint names another origin. */
export async function requireTrailOrigin(
  log: Pick<AuditCheckpointStore, 'newestCheckpoint'>,
  given: string,
  source: string,
): Promise<void> {
  const origin = await trailOrigin(log);
  if (origin !== undefined && origin !== given) throw new OriginMismatchError(given, origin, source);
}
