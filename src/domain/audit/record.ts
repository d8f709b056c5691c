import { type AuditCheckpoint, type CheckpointSet, describeCheckpoint } from './checkpoint.js';
import { Frontier, type Hash, leafHash, type Sha256, sameHash } from './merkle.js';

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
 */
export const AUDIT_VERSIONS = [1, 2, 3, 4] as const;
export type AuditVersion = (typeof AUDIT_VERSIONS)[number];
export const CURRENT_AUDIT_VERSION: AuditVersion = 4;

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

/**
 * The result of walking the chain: where it first breaks, if it does. `checkpoints` is how
 * many signed checkpoints it was checked against, when it was given any to check.
 */
export type AuditVerification =
  | { readonly ok: true; readonly records: number; readonly checkpoints?: number }
  | {
      readonly ok: false;
      readonly records: number;
      readonly brokenAt: number;
      readonly reason: string;
      /** The checkpoint the chain contradicts, when that is what is wrong. */
      readonly checkpoint?: AuditCheckpoint;
    };

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

/** The hash of the chain's start. */
export const GENESIS_HASH = '0'.repeat(64);

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
  };
}

/**
 * The canonical text that a record's hash covers: every field in a fixed order, with the
 * previous record's hash, so changing, removing or reordering a record breaks the chain.
 * Version 4 is `JSON.stringify([4, seq, previousHash, at, requestId, clientId,
 * certificateSerial, onBehalfOf, operation, crn, status, problem, access, issued])`.
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

/**
 * The stored record an archived entry is the text of (decisions §15), or undefined when it is
 * not one: read back field by field, then written out again, which must give the entry to the
 * byte. Its hash is the chain hash of that text.
 */
export function auditRecordOfEntry(
  text: string,
  hash: (text: string) => string,
): StoredAuditRecord | undefined {
  let fields: unknown;
  try {
    fields = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields)) return undefined;
  // Version 1 has no leading version number and ten fields; the others lead with theirs.
  const version = fields.length === 10 ? 1 : fields[0];
  const rest = version === 1 ? fields : fields.slice(1);
  if (typeof version !== 'number' || !isAuditVersion(version)) return undefined;
  const [seq, previousHash, at, requestId, clientId, serial, onBehalfOf, operation, crn, status] = rest;
  const [problem = null, access = null, issued = null] = rest.slice(10);
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
    !textOrNull(issued)
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
    hash: chainHashOf(hash, text, version),
  };
  return auditEntryOf(record) === text ? record : undefined;
}

/** Links a record into the chain, in the current format: its sequence number, the previous hash, and its own hash. */
export function chainRecord(
  record: AuditRecord,
  seq: number,
  previousHash: string,
  hash: (text: string) => string,
): StoredAuditRecord {
  return {
    version: CURRENT_AUDIT_VERSION,
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
    hash: chainHashOf(hash, canonicalAuditText(record, seq, previousHash), CURRENT_AUDIT_VERSION),
  };
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

/**
 * Walks stored records in order and reports the first that does not fit the chain: a gap
 * in the numbering (a removed record), a previous-hash that does not match (reordered or
 * removed), or a hash that does not match its contents (changed). It holds only the last
 * hash, so a chain of any length is checked in constant memory, fed record by record.
 *
 * Given signed checkpoints (already verified), it also checks that the chain passes through
 * each one's head at its seq, and that it does not end before the last of them: what a
 * chain recomputed after a change, or cut short, cannot do.
 */
export class AuditChainWalker {
  private expectedSeq = 1;
  private previousHash = GENESIS_HASH;
  private count = 0;
  private failure: AuditVerification | undefined;
  /** The tree over the records walked, kept when checkpoints give signed roots to check. */
  private readonly tree: Frontier | undefined;

  constructor(
    private readonly hash: (text: string) => string,
    private readonly checkpoints?: CheckpointSet,
    /** SHA-256 as bytes, to keep the tree when checkpoints carry signed roots. */
    private readonly sha256?: Sha256,
    /**
     * Where the walk starts when the records before were archived and are no longer held
     * (decisions §15): the last archived record's seq and hash, and the tree's right edge at
     * that size (its frontier hashes), so signed roots after it are still checked.
     */
    from?: ArchivedStart,
  ) {
    if (from !== undefined) {
      this.expectedSeq = from.seq + 1;
      this.previousHash = from.hash;
    }
    if (checkpoints?.hasRoots) {
      if (sha256 === undefined) throw new Error('checking signed roots needs SHA-256 over bytes');
      this.tree = new Frontier(sha256, from?.seq ?? 0, from?.frontier ?? []);
    }
  }

  /**
   * A walker that continues the chain after `record` (checked by other means, as `audit
   * verify --since` checks the last record a signed checkpoint covers): from its seq and hash on.
   */
  static after(
    record: Pick<StoredAuditRecord, 'seq' | 'hash'>,
    hash: (text: string) => string,
  ): AuditChainWalker {
    return new AuditChainWalker(hash, undefined, undefined, {
      seq: record.seq,
      hash: record.hash,
      frontier: [],
    });
  }

  /** Checks the next record; false once the chain is broken (then stop feeding it). */
  next(record: StoredAuditRecord): boolean {
    if (this.failure) return false;
    this.count++;
    const broken = (reason: string) => {
      this.failure = { ok: false, records: this.count, brokenAt: record.seq, reason };
      return false;
    };
    if (record.seq !== this.expectedSeq) {
      return broken(`expected record ${this.expectedSeq}, found ${record.seq}: a record is missing`);
    }
    if (record.previousHash !== this.previousHash) {
      return broken('its previous-hash does not match the record before it');
    }
    const { version } = record;
    if (!isAuditVersion(version))
      return broken(`its format version ${version} is not one this service knows`);
    // A version-1 record holds no problem type or marking: any set on it was added after.
    if (record.version === 1 && (record.problem !== null || record.access !== null)) {
      return broken('a version-1 record carries version-2 fields: it was changed');
    }
    // Nor does a version-1 or -2 record hold an issued certificate.
    if (record.version < 3 && record.issued !== null) {
      return broken(`a version-${record.version} record carries version-3 fields: it was changed`);
    }
    const text = canonicalAuditText(record, record.seq, record.previousHash, undefined, version);
    if (record.hash !== chainHashOf(this.hash, text, version)) {
      return broken('its contents do not match its hash: it was changed');
    }
    for (const checkpoint of this.checkpoints?.at(record.seq) ?? []) {
      if (checkpoint.head !== record.hash) {
        this.failure = {
          ok: false,
          records: this.count,
          brokenAt: record.seq,
          reason: `chain differs from ${describeCheckpoint(checkpoint)}: the trail was rewritten after it was signed`,
          checkpoint,
        };
        return false;
      }
    }
    // Then the tree, against any signed root at this size (the head above names the
    // checkpoint when both forms are signed).
    if (this.tree !== undefined && this.checkpoints !== undefined && this.sha256 !== undefined) {
      this.tree.push(auditLeafHash(record, this.sha256));
      const signed = this.checkpoints.rootAt(record.seq);
      if (signed !== undefined && !sameHash(signed, this.tree.root())) {
        return broken(
          `the tree of the records up to it differs from the root a checkpoint note signed at size ${record.seq}: the trail was rewritten after it was signed`,
        );
      }
    }
    this.previousHash = record.hash;
    this.expectedSeq++;
    return true;
  }

  result(): AuditVerification {
    if (this.failure) return this.failure;
    if (this.checkpoints === undefined) return { ok: true, records: this.count };
    const last = this.expectedSeq - 1;
    const beyond = this.checkpoints.firstAfter(last);
    if (beyond !== undefined) {
      return {
        ok: false,
        records: this.count,
        brokenAt: last + 1,
        reason: `records missing after seq ${last}: the ${describeCheckpoint(beyond)} was signed when the trail reached that record`,
        checkpoint: beyond,
      };
    }
    return { ok: true, records: this.count, checkpoints: this.checkpoints.size };
  }
}

/** Verifies a chain read in batches (oldest first), holding one batch at a time. */
export async function verifyAuditBatches(
  batches: AsyncIterable<readonly StoredAuditRecord[]>,
  hash: (text: string) => string,
  checkpoints?: CheckpointSet,
  sha256?: Sha256,
  from?: ArchivedStart,
): Promise<AuditVerification> {
  const walker = new AuditChainWalker(hash, checkpoints, sha256, from);
  for await (const batch of batches) {
    for (const record of batch) if (!walker.next(record)) return walker.result();
  }
  return walker.result();
}
