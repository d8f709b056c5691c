import { type Hash, leafHash, type Sha256 } from '../../tlog/merkle.js';
import {
  type AuditRecord,
  type AuditVersion,
  CURRENT_AUDIT_VERSION,
  chainHashOf,
  isAuditVersion,
  type StoredAuditRecord,
} from './record.js';

/**
 * A record's canonical text (what its hash covers, in each format version), its entry in the
 * tree and its leaf hash, and the record an archived entry is the text of.
 */

/** The bytes of a hex hash (a stored one, already checked to be what its text makes). */
function hexBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/**
 * A stored record's leaf hash in the tree (decisions §14): from format 4 its own hash (what
 * its text makes, once checked), before that its canonical text hashed behind the leaf prefix.
 * The one rule the walk, the stores' tree and `audit verify --since` follow.
 */
export function auditLeafHash(record: StoredAuditRecord, sha256: Sha256): Hash {
  if (record.version >= 4) return hexBytes(record.hash);
  const entry = auditEntryOf(record);
  if (entry === undefined)
    throw new Error(
      `record ${record.seq} has format version ${record.version}, which this service does not know`,
    );
  return leafHash(sha256, new TextEncoder().encode(entry));
}

/**
 * The JSON text of each field of a record, as `JSON.stringify` writes it: what the
 * canonical text is made of, and what a store that writes records out as JSON can reuse
 * rather than escape every string twice.
 */
export interface AuditFieldTexts {
  readonly at: string;
  readonly requestId: string;
  readonly clientId: string;
  readonly certificateSerial: string;
  readonly onBehalfOf: string;
  readonly operation: string;
  readonly crn: string;
  readonly status: string;
  readonly problem: string;
  readonly access: string;
  readonly issued: string;
  /** Version 5's continuation statement (`null` on every other record). */
  readonly continuation: string;
}

export function auditFieldTexts(record: AuditRecord): AuditFieldTexts {
  return {
    at: `"${record.at.toISOString()}"`,
    requestId: JSON.stringify(record.requestId),
    clientId: JSON.stringify(record.clientId),
    certificateSerial: JSON.stringify(record.certificateSerial),
    onBehalfOf: JSON.stringify(record.onBehalfOf),
    operation: JSON.stringify(record.operation),
    crn: JSON.stringify(record.crn),
    status: JSON.stringify(record.status),
    problem: JSON.stringify(record.problem),
    access: JSON.stringify(record.access),
    issued: JSON.stringify(record.issued),
    continuation: JSON.stringify(record.continuation ?? null),
  };
}

/**
 * The canonical text that a record's hash covers: every field in a fixed order, with the
 * previous record's hash, so changing, removing or reordering a record breaks the chain.
 * Version 4 is `JSON.stringify([4, seq, previousHash, at, requestId, clientId,
 * certificateSerial, onBehalfOf, operation, crn, status, problem, access, issued])`;
 * version 5 (a trail's continuation) is the same with a leading 5 and the signed statement last.
 * The versions that records written before carry: version 3 is the same with a leading 3;
 * version 2 is the same with a leading 2
 * and without `issued`; version 1 is without the leading number and the last three fields.
 * Given the fields' own JSON texts (a store that writes them out has them already), it is
 * put together from those, the same text to the byte; else it is that one `JSON.stringify`.
 */
export function canonicalAuditText(
  record: AuditRecord,
  seq: number,
  previousHash: string,
  /** The record's field texts, when the caller has them already. */
  texts?: AuditFieldTexts,
  version: AuditVersion = CURRENT_AUDIT_VERSION,
): string {
  if (texts === undefined && version === CURRENT_AUDIT_VERSION) {
    // The current format in one call (the fields' texts joined below are the same text).
    return JSON.stringify([
      CURRENT_AUDIT_VERSION,
      seq,
      previousHash,
      record.at.toISOString(),
      record.requestId,
      record.clientId,
      record.certificateSerial,
      record.onBehalfOf,
      record.operation,
      record.crn,
      record.status,
      record.problem,
      record.access,
      record.issued,
    ]);
  }
  const t = texts ?? auditFieldTexts(record);
  const fields = `${seq},${JSON.stringify(previousHash)},${t.at},${t.requestId},${t.clientId},${t.certificateSerial},${t.onBehalfOf},${t.operation},${t.crn},${t.status}`;
  if (version === 1) return `[${fields}]`;
  if (version === 2) return `[2,${fields},${t.problem},${t.access}]`;
  if (version === 5) return `[5,${fields},${t.problem},${t.access},${t.issued},${t.continuation}]`;
  return `[${version},${fields},${t.problem},${t.access},${t.issued}]`;
}

/**
 * A stored record's entry in the Merkle tree (decisions §14): its canonical text, the exact
 * bytes (UTF-8) its leaf hash covers and `audit prove` hands out. Undefined for a format
 * version this service does not know.
 */
export function auditEntryOf(record: StoredAuditRecord): string | undefined {
  if (!isAuditVersion(record.version)) return undefined;
  return canonicalAuditText(record, record.seq, record.previousHash, undefined, record.version);
}

const textOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** An entry's JSON fields: its version (the leading number, or 1 for ten fields) and the rest, in record order. */
function entryFields(
  text: string,
): { readonly version: unknown; readonly rest: readonly unknown[] } | undefined {
  let fields: unknown;
  try {
    fields = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields)) return undefined;
  // Version 1 has no leading version number and ten fields; the others lead with theirs.
  return fields.length === 10 ? { version: 1, rest: fields } : { version: fields[0], rest: fields.slice(1) };
}

/**
 * An entry's seq and crn, where every format version keeps them, read without the rest of the
 * record (or undefined when it is not shaped as one): for a walk that has proved the entries
 * against a signed root already (`audit verify --archive`'s crn index check).
 */
export function seqAndCrnOfEntry(
  text: string,
): { readonly seq: unknown; readonly crn: string | null } | undefined {
  const read = entryFields(text);
  if (read === undefined) return undefined;
  const crn = read.rest[8];
  return crn === null || typeof crn === 'string' ? { seq: read.rest[0], crn } : undefined;
}

/**
 * The stored record an archived entry is the text of (decisions §15), or undefined when it is
 * not one: read back field by field, then written out again, which must give the entry to the
 * byte. Its hash is the chain hash of that text.
 */
export function auditRecordOfEntry(
  text: string,
  hash: (text: string) => string,
): StoredAuditRecord | undefined {
  const read = entryFields(text);
  if (read === undefined) return undefined;
  const { version, rest } = read;
  if (typeof version !== 'number' || !isAuditVersion(version)) return undefined;
  const [seq, previousHash, at, requestId, clientId, serial, onBehalfOf, operation, crn, status] = rest;
  const [problem = null, access = null, issued = null, continuation = null] = rest.slice(10);
  if (
    typeof seq !== 'number' ||
    typeof previousHash !== 'string' ||
    typeof at !== 'string' ||
    typeof requestId !== 'string' ||
    typeof clientId !== 'string' ||
    typeof serial !== 'string' ||
    !textOrNull(onBehalfOf) ||
    typeof operation !== 'string' ||
    !textOrNull(crn) ||
    typeof status !== 'number' ||
    !textOrNull(problem) ||
    !textOrNull(access) ||
    !textOrNull(issued) ||
    (version === 5) !== (typeof continuation === 'string')
  ) {
    return undefined;
  }
  const when = new Date(at);
  if (Number.isNaN(when.getTime())) return undefined;
  const record: StoredAuditRecord = {
    version,
    seq,
    previousHash,
    at: when,
    requestId,
    clientId,
    certificateSerial: serial,
    onBehalfOf,
    operation,
    crn,
    status,
    problem,
    access,
    issued,
    ...(version === 5 ? { continuation: continuation as string } : {}),
    hash: chainHashOf(hash, text, version),
  };
  return auditEntryOf(record) === text ? record : undefined;
}
