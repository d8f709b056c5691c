import {
  AuditChainWalker,
  type AuditVerification,
  type StoredAuditRecord,
} from '../../src/domain/audit/record.js';

/** Verifies a whole chain held in memory (see {@link AuditChainWalker}). */
export function verifyAuditChain(
  records: Iterable<StoredAuditRecord>,
  hash: (text: string) => string,
): AuditVerification {
  const walker = new AuditChainWalker(hash);
  for (const record of records) if (!walker.next(record)) break;
  return walker.result();
}
