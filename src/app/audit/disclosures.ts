import { auditEntryOf } from '../../domain/audit/canonical-text.js';
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import { isDomainError, StoreUnavailableError, TrailIncompleteError } from '../../domain/errors.js';
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { AuditLog, TimeWindow } from '../../ports/audit-log.js';
import { type Deadline, remainingMs } from '../../ports/deadline.js';
import type { Disclosure, DisclosureList, Disclosures } from '../../ports/disclosures.js';
import { type Hash, leafHash } from '../../tlog/merkle.js';
import { type NoteVerifier, toBase64 } from '../../tlog/note.js';
import { type HashSource, proveFrom, storedSubtreeOf } from '../../tlog/proofs.js';
import { formatTlogProof } from '../../tlog/tlog-proof.js';
import { CHECKPOINT_FILE } from './archive.js';
import { ArchiveReader } from './archive-reader.js';
import { archivedSeqsNaming } from './crn-index.js';
import { newestNoted, openCheckpoint } from './proving.js';
import { cosignedNote } from './witnessed.js';

/**
 * The disclosures of one crn (decisions §22), for `GET /subject-access-request` and `case-read
 * subject-access`: the records naming it, from the archive (through its crn index) and the
 * store (through its own), each with its exact bytes and an inclusion proof against one signed
 * checkpoint, the store's newest (with the cosignatures held for it). The proof of an archived
 * record is made of the archive's hash tiles below its edge and the store's kept hashes above:
 * every proof is checked against the signed root before it is given, so a changed bundle, tile
 * or stored hash is refused. Complete or nothing: anything that cannot be read or verified is a
 * TrailIncompleteError naming why.
 */

export interface DisclosureSources {
  readonly hashes: AuditHashes;
  readonly log: AuditLog;
  /** The keys the checkpoints (the store's and the archive's) and the archive's index are signed with. */
  readonly keys: readonly NoteVerifier[];
  /** The trail's archive (`AUDIT_ARCHIVE_DIR`), read-only; absent when none is configured. */
  readonly archive?: ArchiveTiles | undefined;
  /**
   * Signs a checkpoint of the store's records now (serve's checkpointer): asked when a record
   * in the window is newer than the newest checkpoint. Absent offline, where such a record is
   * refused until one covers it.
   */
  readonly checkpointNow?: (() => Promise<void>) | undefined;
}

/** Disclosures sent in one batch. */
const BATCH = 100;

/** One record to disclose: where it is read from, by seq. */
interface Found {
  readonly seq: number;
  readonly archived: boolean;
}

/** The signed tree every proof of one answer is against. */
interface Against {
  readonly size: number;
  readonly root: Hash;
  /** The checkpoint's note with the cosignatures held for it. */
  readonly note: string;
}

const inWindow = (record: StoredAuditRecord, window: TimeWindow): boolean =>
  (window.from === undefined || record.at.getTime() >= window.from.getTime()) &&
  (window.to === undefined || record.at.getTime() < window.to.getTime());

const asDisclosure = (record: StoredAuditRecord, entry: Uint8Array, proof: string): Disclosure => ({
  time: record.at.toISOString(),
  requestId: record.requestId,
  operation: record.operation,
  recipient: record.clientId,
  onBehalfOf: record.onBehalfOf,
  status: record.status,
  entry: toBase64(entry),
  proof,
});

/** Anything but a domain error (a store's own, which says what failed) becomes the reason a SAR is not answered. */
function incomplete(error: unknown): Error {
  if (isDomainError(error)) return error;
  return new TrailIncompleteError(error instanceof Error ? error.message : String(error));
}

/** The disclosures of `sources`' trail. */
export function disclosuresOf(sources: DisclosureSources): Disclosures {
  return {
    of: async (crn, window, deadline) => {
      try {
        return await listOf(sources, crn, window, deadline);
      } catch (error) {
        throw incomplete(error);
      }
    },
  };
}

/** One read of the trail for one crn: the archive opened once, a cache of the store's hashes. */
class Reading {
  private readonly storeHashes = new Map<number, Hash>();

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

  get archivedSize(): number {
    return this.archive?.reader.size ?? 0;
  }

  /** The tree's hashes: the archive's tiles for a subtree inside the archived tree, else the store's. */
  private readonly source: HashSource = {
    hashes: async (indexes) => {
      const inTiles: number[] = [];
      const inStore: number[] = [];
      for (const i of indexes) {
        const { level, index } = storedSubtreeOf(i);
        if ((index + 1) * 2 ** level <= this.archivedSize) inTiles.push(i);
        else if (!this.storeHashes.has(i)) inStore.push(i);
      }
      const found = new Map(this.archive ? await this.archive.reader.tileHashes.hashes(inTiles) : []);
      if (inStore.length > 0) {
        const read = await this.sources.log.treeHashes(inStore.sort((a, b) => a - b));
        for (const [i, hash] of read) this.storeHashes.set(i, hash);
      }
      for (const i of indexes) {
        const held = this.storeHashes.get(i);
        if (held !== undefined) found.set(i, held);
      }
      return found;
    },
  };

  /** The archived records naming the crn inside the window, by the archive's index, each checked to name it. */
  async *archived(): AsyncGenerator<{ record: StoredAuditRecord; entry: Uint8Array }> {
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
  async *stored(): AsyncGenerator<{ record: StoredAuditRecord; entry: Uint8Array }> {
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
        yield { record, entry: new TextEncoder().encode(text) };
      }
    }
  }

  async *all(): AsyncGenerator<{ record: StoredAuditRecord; entry: Uint8Array; found: Found }> {
    for await (const read of this.archived())
      yield { ...read, found: { seq: read.record.seq, archived: true } };
    for await (const read of this.stored())
      yield { ...read, found: { seq: read.record.seq, archived: false } };
  }

  /** The proof of `entry`, record `seq`, against `against`, checked before it is given. */
  async prove(seq: number, entry: Uint8Array, against: Against): Promise<string> {
    const { sha256 } = this.sources.hashes;
    const proof = await proveFrom(sha256, this.source, {
      inclusion: seq - 1,
      leaf: leafHash(sha256, entry),
      size: against.size,
      root: against.root,
    });
    if (proof === undefined) {
      throw new TrailIncompleteError(
        `record ${seq} does not verify: it is not the leaf the checkpoint of ${against.size} records signed (a record, a tile or a stored hash was changed); run case-read audit verify`,
      );
    }
    return formatTlogProof({ index: seq - 1, hashes: proof, checkpoint: against.note });
  }
}

/**
 * The store's newest signed checkpoint, opened with the keys given (a stored note is not taken
 * on trust); undefined when none is stored yet.
 */
async function newestSigned(sources: DisclosureSources): Promise<Against | undefined> {
  if ((await sources.log.newestCheckpoint({ withNote: true }))?.note === undefined) return undefined;
  const newest = await newestNoted(sources.log);
  const { body } = openCheckpoint(
    newest.note,
    sources.keys,
    `the newest stored checkpoint (${newest.body.size} records)`,
  );
  return {
    size: body.size,
    root: body.root,
    note: cosignedNote({ ...newest.checkpoint, note: newest.note }),
  };
}

/** The archive as one answer reads it: opened once, its checkpoint checked, its crn index read once. */
interface OpenArchive {
  readonly tiles: ArchiveTiles;
  readonly reader: ArchiveReader;
  /** The seqs the crn index lists for the crn (read at the first call; both passes use them). */
  seqs(crn: string): Promise<readonly number[]>;
}

async function openArchive(sources: DisclosureSources): Promise<OpenArchive | undefined> {
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
    tiles,
    reader,
    seqs: (crn) => {
      listed ??= archivedSeqsNaming(sources.hashes, tiles, sources.keys, reader.checkpoint, crn);
      return listed;
    },
  };
}

/** Pass one: every disclosure read and its proof checked; what is kept is where each one is. */
async function listOf(
  sources: DisclosureSources,
  crn: string,
  window: TimeWindow,
  deadline?: Deadline,
): Promise<DisclosureList> {
  const archive = await openArchive(sources);
  const reading = new Reading(sources, archive, crn, window, Number.POSITIVE_INFINITY, deadline);
  let against = await newestSigned(sources);
  // Records after the newest checkpoint (under traffic, nearly always: the last SAR's own record
  // among them): one covering them is signed first, rather than the list read twice.
  if (sources.checkpointNow !== undefined && (await sources.log.head()).seq > (against?.size ?? 0)) {
    await sources.checkpointNow();
    against = await newestSigned(sources);
  }
  let found: Found[] = [];
  let asked = false;
  for (;;) {
    found = [];
    let uncovered: number | undefined;
    for await (const { record, entry, found: where } of reading.all()) {
      if (against === undefined || record.seq > against.size) {
        uncovered ??= record.seq;
      } else {
        await reading.prove(record.seq, entry, against);
      }
      found.push(where);
    }
    if (uncovered === undefined) break;
    // A record newer than the newest checkpoint: one covering it is signed now, once.
    if (asked || sources.checkpointNow === undefined) {
      throw new TrailIncompleteError(
        against === undefined
          ? 'the trail has no signed checkpoint of its tree to prove records against (serve signs them when AUDIT_SIGNING_KEY is set)'
          : `record ${uncovered} is after the newest signed checkpoint (${against.size} records): it is proved once the next checkpoint covers it`,
      );
    }
    asked = true;
    await sources.checkpointNow();
    against = await newestSigned(sources);
  }
  const checked = against;
  return {
    count: found.length,
    batches: () => sendable(new Reading(sources, archive, crn, window, checked?.size), found, checked),
  };
}

/** Pass two: the same records read again and proved again, a batch at a time; what differs from pass one breaks the answer off. */
async function* sendable(
  reading: Reading,
  found: readonly Found[],
  against: Against | undefined,
): AsyncGenerator<readonly Disclosure[]> {
  if (found.length === 0 || against === undefined) return;
  let at = 0;
  let batch: Disclosure[] = [];
  for await (const { record, entry, found: where } of reading.all()) {
    const expected = found[at++];
    if (expected?.seq !== where.seq || expected.archived !== where.archived) {
      throw new TrailIncompleteError(
        `the trail changed while it was read: record ${where.seq} was not read the first time`,
      );
    }
    batch.push(asDisclosure(record, entry, await reading.prove(record.seq, entry, against)));
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (at !== found.length)
    throw new TrailIncompleteError(
      'the trail changed while it was read: records were missing the second time',
    );
  if (batch.length > 0) yield batch;
}
