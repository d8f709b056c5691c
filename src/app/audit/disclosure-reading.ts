import { auditEntryOf } from '../../domain/audit/canonical-text.js';
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import { StoreUnavailableError, TrailIncompleteError } from '../../domain/errors.js';
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { AuditLog, TimeWindow } from '../../ports/audit-log.js';
import { type Deadline, remainingMs } from '../../ports/deadline.js';
import type { OpenSpill } from '../../ports/spill.js';
import type { Hash } from '../../tlog/merkle.js';
import type { NoteVerifier } from '../../tlog/note.js';
import { storedSubtreeOf } from '../../tlog/proofs.js';
import { CHECKPOINT_FILE } from './archive.js';
import { ArchiveReader } from './archive-reader.js';
import { archivedSeqsNaming } from './crn-index.js';

/**
 * One read of the trail for one crn (decisions §22, §23): the records naming it, from the
 * archive (through its crn index) and then the store (through its own), each with its exact
 * bytes; and the tree's stored hashes, from the archive's tiles inside the archived tree and
 * from the store above it. Nothing is kept but what the archive's reader keeps (the last bundle
 * and tiles): a subject of any size is read in bounded memory.
 */

export interface DisclosureSources {
  readonly hashes: AuditHashes;
  readonly log: AuditLog;
  /** The keys the checkpoints (the store's and the archive's) and the archive's index may be signed with: the current key first, then those it replaced. */
  readonly keys: readonly NoteVerifier[];
  /**
   * The key the answer's checkpoint must be signed by (serve's `AUDIT_SIGNING_KEY`), so that
   * its proofs verify under the key the SAR team holds now; absent offline, where any of
   * `keys` will do.
   */
  readonly signing?: NoteVerifier | undefined;
  /** The trail's archive (`AUDIT_ARCHIVE_DIR`), read-only; absent when none is configured. */
  readonly archive?: ArchiveTiles | undefined;
  /**
   * Makes the store's newest checkpoint one that covers its head and is signed with the
   * current key (serve's checkpointer; after a rotation, the new key's signature added to
   * the newest): asked when a record in the window is newer than the newest checkpoint, or
   * the newest is not signed by the current key. Absent offline, where such a record is
   * refused until one covers it.
   */
  readonly checkpointNow?: (() => Promise<void>) | undefined;
  /** Where the proof's hashes are set aside between the passes (a temporary file). */
  readonly spill: OpenSpill;
}

/** A record to disclose, and its entry: the exact bytes of its leaf. */
export interface Read {
  readonly record: StoredAuditRecord;
  readonly entry: Uint8Array;
}

/** The archive as one answer reads it: opened once, its checkpoint checked, its crn index read once. */
export interface OpenArchive {
  readonly reader: ArchiveReader;
  /** The seqs the crn index lists for the crn (read at the first call; both passes use them). */
  seqs(crn: string): Promise<readonly number[]>;
}

/** The archive the store's records before its edge are read from; undefined when there is none (and none is needed). */
export async function openArchive(sources: DisclosureSources): Promise<OpenArchive | undefined> {
  const letGo = (await sources.log.archivedHead()).seq;
  if (sources.archive === undefined) {
    if (letGo > 0) {
      throw new TrailIncompleteError(
        `the audit store let go of records 1..${letGo} (archived) and no archive is configured: set AUDIT_ARCHIVE_DIR`,
      );
    }
    return undefined;
  }
  const tiles = sources.archive;
  if (letGo === 0 && !(await tiles.has(CHECKPOINT_FILE))) return undefined;
  const reader = await ArchiveReader.open(sources.hashes, tiles, sources.keys);
  if (reader.size < letGo) {
    throw new TrailIncompleteError(
      `the archive in ${tiles.location} holds records 1..${reader.size}, but the store let go of 1..${letGo}`,
    );
  }
  let listed: Promise<readonly number[]> | undefined;
  return {
    reader,
    seqs: (crn) => {
      listed ??= archivedSeqsNaming(sources.hashes, tiles, sources.keys, reader.checkpoint, crn);
      return listed;
    },
  };
}

const inWindow = (record: StoredAuditRecord, window: TimeWindow): boolean =>
  (window.from === undefined || record.at.getTime() >= window.from.getTime()) &&
  (window.to === undefined || record.at.getTime() < window.to.getTime());

export class DisclosureReading {
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly sources: DisclosureSources,
    private readonly archive: OpenArchive | undefined,
    private readonly crn: string,
    private readonly window: TimeWindow,
    /** The last seq this reading is about: the second pass ends at the checked checkpoint's size, as the first found them. */
    private readonly upTo = Number.POSITIVE_INFINITY,
    /** The request's deadline (the first pass only): past it, the reading stops; the request has been answered. */
    private readonly deadline?: Deadline,
  ) {}

  /** Throws once the deadline (if any) has passed: nobody waits for what is read after it. */
  inTime(): void {
    if (this.deadline !== undefined && remainingMs(this.deadline) === 0) {
      // As the request cycle answers a deadline passed on a store: 503, never an error of its own.
      throw new StoreUnavailableError('audit store', 'deadline');
    }
  }

  get sha256() {
    return this.sources.hashes.sha256;
  }

  private get archivedSize(): number {
    return this.archive?.reader.size ?? 0;
  }

  /** The archived records naming the crn inside the window, by the archive's index, each checked to name it. */
  private async *archived(): AsyncGenerator<Read> {
    if (!this.archive) return;
    const { reader } = this.archive;
    for (const seq of await this.archive.seqs(this.crn)) {
      this.inTime();
      const read = await reader.entryAt(seq);
      if (read.record.crn !== this.crn) {
        throw new TrailIncompleteError(
          `the archive's crn index lists record ${seq}, which names another crn: the index was changed; run case-read audit verify --archive`,
        );
      }
      if (inWindow(read.record, this.window)) yield read;
    }
  }

  /** The store's records naming the crn inside the window, after the archived ones. */
  private async *stored(): AsyncGenerator<Read> {
    for await (const batch of this.sources.log.recordsNaming(this.crn, this.window)) {
      this.inTime();
      for (const record of batch) {
        if (record.seq <= this.archivedSize) continue;
        // Appended since the first pass (this request's own record among them): not part of this answer.
        if (record.seq > this.upTo) return;
        if (record.crn !== this.crn || !inWindow(record, this.window)) {
          throw new TrailIncompleteError(
            `the audit store answered record ${record.seq}, which was not asked for`,
          );
        }
        const text = auditEntryOf(record);
        if (text === undefined) {
          throw new TrailIncompleteError(
            `record ${record.seq} has a format version this service does not know`,
          );
        }
        yield { record, entry: this.encoder.encode(text) };
      }
    }
  }

  /** Every record naming the crn in the window, oldest first: the archive's, then the store's. */
  async *all(): AsyncGenerator<Read> {
    yield* this.archived();
    yield* this.stored();
  }

  /**
   * The tree's stored hashes at `indexes` (ascending), in their order: the archive's tiles for
   * a subtree inside the archived tree, else the store's. One missing is refused.
   */
  async hashes(indexes: readonly number[]): Promise<Hash[]> {
    this.inTime();
    const inTiles: number[] = [];
    const inStore: number[] = [];
    for (const i of indexes) {
      const { level, index } = storedSubtreeOf(i);
      if ((index + 1) * 2 ** level <= this.archivedSize) inTiles.push(i);
      else inStore.push(i);
    }
    const fromTiles =
      this.archive && inTiles.length > 0 ? await this.archive.reader.tileHashes.hashes(inTiles) : undefined;
    const fromStore = inStore.length > 0 ? await this.sources.log.treeHashes(inStore) : undefined;
    return indexes.map((i) => {
      const hash = fromTiles?.get(i) ?? fromStore?.get(i);
      if (hash === undefined) {
        throw new TrailIncompleteError(
          `the trail holds no stored hash ${i}, which the proof needs: run case-read audit verify`,
        );
      }
      return hash;
    });
  }
}
