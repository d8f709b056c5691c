import type {
  AuditQuery,
  AuditRecord,
  AuditVerification,
  StoredAuditRecord,
} from '../domain/audit/record.js';

/**
 * Appends audit records. Resolves once the record is durably stored; rejects (or throws)
 * when it cannot be kept, and the caller then fails closed.
 */
export interface AuditWriter {
  append(record: AuditRecord): void | Promise<void>;
}

/**
 * The audit log port (adapters: SQLite, JSONL, PostgreSQL). Contract, checked by
 * `test/contract/audit-log.contract.ts`:
 *
 * - `append` resolves only once the record is stored, or rejects: a record is never silently lost;
 * - records are numbered from 1 in the order appended, each carrying the SHA-256 of the
 *   previous record (`canonicalAuditText`), starting from `GENESIS_HASH`;
 * - `verify` walks the whole chain in batches (constant memory, whatever its length) and
 *   names the first record that was changed, removed or reordered;
 * - `query` filters by client, crn and time, oldest first.
 */
export interface AuditLog extends AuditWriter {
  append(record: AuditRecord): Promise<void>;
  query(filter: AuditQuery): Promise<StoredAuditRecord[]>;
  verify(): Promise<AuditVerification>;
}
