import type { AuditQuery, AuditVerification, StoredAuditRecord } from '../domain/audit/record.js';
import type { AuditWriter } from '../domain/needs.js';

/**
 * The audit log port (adapters: SQLite, JSON lines). Contract, checked by
 * `test/contract/audit-log.contract.ts`:
 *
 * - `append` stores the record before it returns, or throws: a record is never silently lost;
 * - records are numbered from 1 in the order appended, each carrying the SHA-256 of the
 *   previous record (`canonicalAuditText`), starting from `GENESIS_HASH`;
 * - `verify` walks the whole chain and names the first record that was changed, removed or
 *   reordered;
 * - `query` filters by client, crn and time, oldest first.
 */
export interface AuditLog extends AuditWriter {
  query(filter: AuditQuery): StoredAuditRecord[];
  verify(): AuditVerification;
  close(): void;
}
