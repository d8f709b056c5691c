/**
 * One audit record (decisions §5): every request that reaches step 3 leaves one. It says who
 * asked for what and what they were told, never what was returned and never a secret.
 * Data returned to an on-behalf-of request may be shared only with that person: this trail
 * is how that is checked later.
 */
export interface AuditRecord {
  readonly at: Date;
  readonly requestId: string;
  /** The certificate CN. */
  readonly clientId: string;
  readonly certificateSerial: string;
  /** The verified on-behalf-of e-mail, when there was one. */
  readonly onBehalfOf: string | null;
  /** The operation id (`getCase`, …), or `METHOD /route` for other paths. */
  readonly operation: string;
  /** The crn asked for, when it was a valid one. */
  readonly crn: string | null;
  readonly status: number;
  /**
   * The problem type of a refusal or failure, as the last part of its URN (`limited-access`,
   * `permission-denied`, …); null when answered. Format version 2.
   */
  readonly problem: string | null;
  /**
   * How limited access let an answer through when it was not plain: `client-enforces` (a
   * limited case answered to a client acting as itself under `allow`); null otherwise.
   * Format version 2.
   */
  readonly access: string | null;
  /**
   * The serial of a client certificate issued to this request (operation
   * `renewCertificate`, decisions §12), upper-case hex; null otherwise. Format version 3.
   */
  readonly issued: string | null;
  /**
   * The signed statement of a trail's continuation (src/domain/audit/continuation.ts), on the
   * one record `case-read audit continue` appends after a loss; absent or null on every other.
   * Format version 5.
   */
  readonly continuation?: string | null;
}

/**
 * The `problem` of a second record for a request whose first record was stored only after
 * its deadline, when the answer had been withheld (503) already (decisions §11): the later
 * record, same request id, says what the client was really told.
 */
export const ANSWER_WITHHELD = 'answer-withheld';

/**
 * The record format versions. Version 1 (no problem type, no access marking), version 2
 * (no issued certificate) and version 3 (hashed without the tree's leaf prefix) are what the
 * trail held before; their records keep their text and still verify. New records are
 * {@link CURRENT_AUDIT_VERSION}: the fields of version 3, and a hash that is the record's leaf
 * hash in the Merkle tree (decisions §14), so one SHA-256 serves the chain and the tree.
 * Version 5 is version 4 and a continuation statement: only the record that continues a trail
 * after a loss ({@link CONTINUATION_VERSION}, ADR 30) is written in it.
 */
export const AUDIT_VERSIONS = [1, 2, 3, 4, 5] as const;
export type AuditVersion = (typeof AUDIT_VERSIONS)[number];
export const CURRENT_AUDIT_VERSION: AuditVersion = 4;
export const CONTINUATION_VERSION: AuditVersion = 5;

/** Whether a record carries a continuation statement (the one record format 5 is written for). */
export const isContinuation = (record: Pick<AuditRecord, 'continuation'>): boolean =>
  typeof record.continuation === 'string';

/** The version a new record is written in: the current one, or 5 when it carries a continuation. */
export const versionToWrite = (record: Pick<AuditRecord, 'continuation'>): AuditVersion =>
  isContinuation(record) ? CONTINUATION_VERSION : CURRENT_AUDIT_VERSION;

/**
 * What a record's `hash` is, given its canonical text: from version 4 the RFC 9162 leaf hash,
 * SHA-256(0x00 ‖ text), hex (the tree's leaf and the chain's link at once); before, the plain
 * SHA-256 of the text. `sha256Hex` hashes a text's UTF-8 bytes; U+0000 is the byte 0x00.
 */
export const chainHashOf = (sha256Hex: (text: string) => string, text: string, version: number): string =>
  version >= 4 ? sha256Hex(`\u0000${text}`) : sha256Hex(text);

export const isAuditVersion = (version: number): version is AuditVersion =>
  (AUDIT_VERSIONS as readonly number[]).includes(version);

/** A stored record: its format version, its place in the chain and the hashes that link it to the one before. */
export interface StoredAuditRecord extends AuditRecord {
  readonly version: number;
  readonly seq: number;
  readonly previousHash: string;
  readonly hash: string;
}

export interface AuditQuery {
  /** The request's id: its record, or two when a late answer was withheld (decisions §11). */
  readonly requestId?: string;
  readonly clientId?: string;
  readonly crn?: string;
  readonly since?: Date;
  readonly limit?: number;
}

/** Whether a record is one `filter` asks for (its limit aside). */
export function matchesAuditQuery(record: StoredAuditRecord, filter: AuditQuery): boolean {
  return (
    (filter.requestId === undefined || record.requestId === filter.requestId) &&
    (filter.clientId === undefined || record.clientId === filter.clientId) &&
    (filter.crn === undefined || record.crn === filter.crn) &&
    (filter.since === undefined || record.at.getTime() >= filter.since.getTime())
  );
}
