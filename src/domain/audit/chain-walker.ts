import { Frontier, type Sha256, sameHash } from '../../tlog/merkle.js';
import { auditLeafHash, canonicalAuditText } from './canonical-text.js';
import { type ArchivedStart, GENESIS_HASH } from './chain.js';
import { type AuditCheckpoint, type CheckpointSet, describeCheckpoint } from './checkpoint.js';
import {
  CONTINUATION_VERSION,
  chainHashOf,
  isAuditVersion,
  isContinuation,
  type StoredAuditRecord,
} from './record.js';

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
    // Only a version-5 record carries a continuation, and it always does.
    if ((version === CONTINUATION_VERSION) !== isContinuation(record)) {
      return broken(
        version === 5
          ? 'a version-5 record carries no continuation statement: it was changed'
          : `a version-${version} record carries a continuation statement: it was changed`,
      );
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
