import type { Hash } from '../../tlog/merkle.js';
import { canonicalAuditText } from './canonical-text.js';
import { type AuditRecord, chainHashOf, type StoredAuditRecord, versionToWrite } from './record.js';

/** The hash chain: its start, how a record is linked into it, and where it begins after an archive. */

/** The hash of the chain's start. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * Links a record into the chain, in the current format (5 for a continuation): its sequence
 * number, the previous hash, and its own hash.
 */
export function chainRecord(
  record: AuditRecord,
  seq: number,
  previousHash: string,
  hash: (text: string) => string,
): StoredAuditRecord {
  const version = versionToWrite(record);
  const linked: StoredAuditRecord = {
    version,
    at: record.at,
    requestId: record.requestId,
    clientId: record.clientId,
    certificateSerial: record.certificateSerial,
    onBehalfOf: record.onBehalfOf,
    operation: record.operation,
    crn: record.crn,
    status: record.status,
    problem: record.problem,
    access: record.access,
    issued: record.issued,
    seq,
    previousHash,
    hash: chainHashOf(hash, canonicalAuditText(record, seq, previousHash, undefined, version), version),
  };
  // A request's record keeps the one shape it always had; only a continuation carries more.
  return version === 4 ? linked : { ...linked, continuation: record.continuation ?? null };
}

/**
 * Where the held trail begins once older records were archived (decisions §15): the last
 * archived record's seq and chain hash, and the tree's frontier hashes at that size.
 */
export interface ArchivedStart {
  readonly seq: number;
  readonly hash: string;
  readonly frontier: readonly Hash[];
}
