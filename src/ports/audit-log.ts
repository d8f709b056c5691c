import type { AuditCheckpoint, ChainHead, CheckpointSet } from '../domain/audit/checkpoint.js';
import type {
  AuditQuery,
  AuditRecord,
  AuditVerification,
  StoredAuditRecord,
} from '../domain/audit/record.js';
import type { Deadline } from './deadline.js';

/**
 * Appends audit records. Resolves once the record is durably stored; rejects (or throws)
 * when it cannot be kept, and the caller then fails closed. Given the request's deadline, a
 * store that has not begun writing the record when it passes leaves it unwritten and
 * rejects, and one that can cancel its write at the deadline does (the caller answers at the
 * deadline whatever the store does).
 */
export interface AuditWriter {
  append(record: AuditRecord, deadline?: Deadline): void | Promise<void>;
}

/**
 * Where the signed checkpoints of the chain are kept, beside the records (decisions §9).
 * Every audit store is one.
 */
export interface AuditCheckpointStore {
  /** The chain's last stored record (seq 0 and the genesis hash when there is none). */
  head(): Promise<ChainHead>;
  /** Stores a checkpoint; resolves once it is stored, rejects when it cannot be. */
  saveCheckpoint(checkpoint: AuditCheckpoint): Promise<void>;
  /** The stored checkpoint with the highest seq, if any. */
  newestCheckpoint(): Promise<AuditCheckpoint | undefined>;
  /**
   * Every stored checkpoint, lowest seq first, read a page at a time. A stored row that is
   * not a well-formed checkpoint comes as `{ invalid }`, naming where it was found.
   */
  checkpoints(): AsyncIterable<AuditCheckpoint | { readonly invalid: string }>;
}

/**
 * The audit log port (adapters: SQLite, JSONL, PostgreSQL). Contract, checked by
 * `test/contract/audit-log.contract.ts`:
 *
 * - `append` resolves only once the record is stored, or rejects: a record is never silently lost;
 * - records are numbered from 1 in the order appended, each carrying the SHA-256 of the
 *   previous record (`canonicalAuditText`), starting from `GENESIS_HASH`;
 * - `verify` walks the whole chain in batches (constant memory, whatever its length) and
 *   names the first record that was changed, removed or reordered; given checkpoints, also
 *   the first one the chain does not pass through or ends before;
 * - `query` filters by client, crn and time, oldest first;
 * - `flush` resolves once every append made before it was stored or refused;
 * - checkpoints are stored and read back as given, several at one seq included.
 */
export interface AuditLog extends AuditWriter, AuditCheckpointStore {
  append(record: AuditRecord, deadline?: Deadline): Promise<void>;
  flush(): Promise<void>;
  query(filter: AuditQuery): Promise<StoredAuditRecord[]>;
  verify(checkpoints?: CheckpointSet): Promise<AuditVerification>;
}
