import { AUDIT_COLUMNS, rowValuesOf } from '../../src/adapters/shared/audit-chain.js';
import { sha256Hex } from '../../src/adapters/shared/sha256.js';
import { canonicalAuditText } from '../../src/domain/audit/canonical-text.js';
import { GENESIS_HASH } from '../../src/domain/audit/chain.js';
import type { ChainHead } from '../../src/domain/audit/checkpoint.js';
import type { AuditRecord, StoredAuditRecord } from '../../src/domain/audit/record.js';

/**
 * Records as the service stored them before format version 3: version 2, hashed over the
 * version-2 text (no `issued`), linked from the genesis hash. For the migration tests.
 */
export function versionTwoChain(records: readonly AuditRecord[]): {
  readonly stored: StoredAuditRecord[];
  readonly head: ChainHead;
} {
  let previousHash = GENESIS_HASH;
  const stored = records.map((record, i) => {
    const seq = i + 1;
    const hash = sha256Hex(canonicalAuditText(record, seq, previousHash, undefined, 2));
    const linked: StoredAuditRecord = { ...record, issued: null, version: 2, seq, previousHash, hash };
    previousHash = hash;
    return linked;
  });
  return { stored, head: { seq: stored.length, hash: previousHash } };
}

/** The columns a version-2 table lacks: `issued` (format 3) and `continuation` (format 5). */
const LATER_COLUMNS: readonly string[] = ['issued', 'continuation'];

/** The audit table's columns before format version 3 (no `issued`), in the order the SQL stores insert them. */
export const VERSION_TWO_COLUMNS = AUDIT_COLUMNS.filter((column) => !LATER_COLUMNS.includes(column));

/** A stored record's row values for {@link VERSION_TWO_COLUMNS}. */
export const versionTwoRowValuesOf = (stored: StoredAuditRecord): unknown[] =>
  rowValuesOf(stored).filter((_, i) => !LATER_COLUMNS.includes(AUDIT_COLUMNS[i] as string));
