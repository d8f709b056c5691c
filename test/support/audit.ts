import { AuditChainWalker, type AuditVerification } from '../../src/domain/audit/chain-walker.js';
import type { CheckpointSet } from '../../src/domain/audit/checkpoint.js';
import type { StoredAuditRecord } from '../../src/domain/audit/record.js';
import type { ArchiveLock } from '../../src/ports/audit-log.js';

/** Verifies a whole chain held in memory (see {@link AuditChainWalker}), against checkpoints when given. */
export function verifyAuditChain(
  records: Iterable<StoredAuditRecord>,
  hash: (text: string) => string,
  checkpoints?: CheckpointSet,
): AuditVerification {
  const walker = new AuditChainWalker(hash, checkpoints);
  for (const record of records) if (!walker.next(record)) break;
  return walker.result();
}

/** An archive lock that is always held: for tests that write an archive in one process, with no other run. */
export const HELD_ARCHIVE_LOCK: ArchiveLock = { stillHeld: async () => true, release: async () => {} };
