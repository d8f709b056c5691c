import type { StoredAuditRecord } from '../../domain/audit/record.js';
import { isDomainError, TrailIncompleteError } from '../../domain/errors.js';
import type { TimeWindow } from '../../ports/audit-log.js';
import type { Deadline } from '../../ports/deadline.js';
import type {
  Disclosure,
  DisclosureList,
  DisclosurePart,
  Disclosures,
  TrailGap,
} from '../../ports/disclosures.js';
import type { Spill } from '../../ports/spill.js';
import { BatchProofCheck, BatchProofError, batchProofIndexes } from '../../tlog/batch-proof.js';
import { type Hash, leafHash, type Sha256, sameHash } from '../../tlog/merkle.js';
import { type NoteVerifier, toBase64 } from '../../tlog/note.js';
import { ContinuationError, openContinuations } from './continuation.js';
import { DisclosureReading, type DisclosureSources, openArchive } from './disclosure-reading.js';
import { AuditProofError, newestNoted, openCheckpoint } from './proving.js';
import { cosignedNote } from './witnessed.js';

export type { DisclosureSources } from './disclosure-reading.js';

/**
 * The disclosures of one crn (decisions §22, §23), for `GET /subject-access-request` and
 * `case-read subject-access`: the records naming it, from the archive and the store, each with
 * its exact bytes, and one batch proof of them all (src/tlog/batch-proof.ts, ADR 27) against one
 * signed checkpoint, the store's newest (with the cosignatures held for it). Complete or
 * nothing: anything that cannot be read, or that does not make the signed root, is a
 * TrailIncompleteError naming why, before a byte is sent. With them, the trail's losses that
 * meet the window (ADR 30), each from its signed continuation record: one that cannot be read or
 * does not verify is refused too, never an answer that hides a loss.
 *
 * Two passes, each in bounded memory: the first reads every record and the proof's hashes and
 * checks the root (kept: each record's seq, 8 bytes, and leaf hash, 32); the second reads them
 * again as they are sent, and checks the root again once the last hash is read: what differs
 * breaks the answer off, never completes it.
 */

/**
 * Disclosures sent in one batch: about 29 KB of JSON, and each batch of hashes about 16 KB of
 * base64. Pieces that small stay in V8's young generation and are collected at once; batches of
 * 500 and 3,072 made strings for its large-object space, and serve's resident memory rose by
 * 118 MiB more while it sent a 100,000-disclosure answer (bench: subject-access --door-only).
 */
const BATCH = 50;
/** Stored hashes read, checked and sent at a time: three to a base64 quantum of four characters. */
const HASHES = 3 * 128;

/** The signed tree every proof of one answer is against. */
interface Against {
  readonly size: number;
  readonly root: Hash;
  /** The checkpoint's note with the cosignatures held for it. */
  readonly note: string;
}

const asDisclosure = (record: StoredAuditRecord, entry: Uint8Array): Disclosure => ({
  time: record.at.toISOString(),
  requestId: record.requestId,
  operation: record.operation,
  recipient: record.clientId,
  onBehalfOf: record.onBehalfOf,
  status: record.status,
  index: record.seq - 1,
  entry: toBase64(entry),
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

/** The records found: their seqs, ascending, and their leaf hashes, 32 bytes each, end to end. */
class Leaves {
  readonly seqs: number[] = [];
  private bytes = new Uint8Array(32 * 256);

  push(seq: number, hash: Hash): void {
    const at = this.seqs.length * 32;
    if (at + 32 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes.set(hash, at);
    this.seqs.push(seq);
  }

  hashAt = (position: number): Hash => this.bytes.subarray(position * 32, position * 32 + 32);

  get indexes(): number[] {
    return this.seqs.map((seq) => seq - 1);
  }
}

/** The next `n` of `items`, or fewer at their end. */
function take(items: Iterator<number>, n: number): number[] {
  const out: number[] = [];
  for (let next = items.next(); !next.done; next = items.next()) {
    out.push(next.value);
    if (out.length === n) break;
  }
  return out;
}

/**
 * The proof's hashes, read a piece at a time and checked into the batch proof; the root, once
 * all are, is the signed one or they are refused. Each piece is valid until the next is asked for.
 */
async function* provenHashes(
  reading: DisclosureReading,
  leaves: Leaves,
  against: Against,
): AsyncGenerator<Uint8Array> {
  const { sha256 } = reading;
  const indexes = leaves.indexes;
  const check = new BatchProofCheck(sha256, indexes, against.size, leaves.hashAt);
  const wanted = batchProofIndexes(indexes, against.size);
  const refused = (why: string) =>
    new TrailIncompleteError(
      `the records naming the crn and the trail's hashes do not make the root the checkpoint of ${against.size} records signs (${why}: a record, a tile or a stored hash was changed); run case-read audit verify`,
    );
  // One buffer for every piece: each is set aside before the next is asked for.
  const pieces = new Uint8Array(HASHES * 32);
  for (let next = take(wanted, HASHES); next.length > 0; next = take(wanted, HASHES)) {
    const hashes = await reading.hashes(next);
    try {
      check.take(hashes);
    } catch (error) {
      if (error instanceof BatchProofError) throw refused(error.message);
      throw error;
    }
    for (const [i, hash] of hashes.entries()) pieces.set(hash, i * 32);
    yield pieces.subarray(0, hashes.length * 32);
  }
  if (!sameHash(check.root(), against.root)) throw refused('they make another root');
}

/** A digest of pieces as they go, each chained onto the one before: what was set aside, to be sent as it was. */
class Chained {
  private digest: Hash = new Uint8Array(32);
  constructor(private readonly sha256: Sha256) {}
  add(piece: Uint8Array): void {
    this.digest = this.sha256(this.digest, piece);
  }
  same(other: Chained): boolean {
    return sameHash(this.digest, other.digest);
  }
}

/**
 * The store's newest signed checkpoint, opened with the keys given (a stored note is not taken
 * on trust); with `signing`, it must be signed by that key. Undefined when none is stored yet.
 */
async function newestSigned(sources: DisclosureSources): Promise<Against | undefined> {
  if ((await sources.log.newestCheckpoint({ withNote: true }))?.note === undefined) return undefined;
  const newest = await newestNoted(sources.log);
  const note = cosignedNote({ ...newest.checkpoint, note: newest.note });
  const keys: readonly NoteVerifier[] = sources.signing === undefined ? sources.keys : [sources.signing];
  const { body } = openCheckpoint(note, keys, `the newest stored checkpoint (${newest.body.size} records)`);
  return { size: body.size, root: body.root, note };
}

/** The newest checkpoint, one covering the store's head and signed by the current key made first where serve can. */
async function checkpointToProveAgainst(sources: DisclosureSources): Promise<Against | undefined> {
  const { checkpointNow } = sources;
  if (checkpointNow === undefined) return newestSigned(sources);
  let against: Against | undefined;
  try {
    against = await newestSigned(sources);
  } catch (error) {
    // Signed before the key was rotated: the current key's signature is added (ADR 27).
    if (!(error instanceof AuditProofError) || error.why !== 'no-key') throw error;
  }
  // Records after the newest checkpoint (under traffic, nearly always: the last SAR's own
  // record among them): one covering them is signed first, rather than the list read twice.
  if (against === undefined || (await sources.log.head()).seq > against.size) {
    await checkpointNow();
    against = await newestSigned(sources);
  }
  return against;
}

/**
 * The trail's losses (its continuation records, their statements opened with the log's keys)
 * whose stretch meets `window`: the records lost were written after the last kept one (or from
 * the trail's start) and before the break. A stretch meets the window (from inclusive, to
 * exclusive) unless it ended before the window began or began at or after its end.
 *
 * Opened with every key the trail may have been signed with (`keys`, the current one among
 * them), not only the answer's: a statement signed before a rotation is still the trail's, and
 * is not sent (the answer's proof, which the SAR team checks with the current key, covers the
 * disclosures only).
 */
async function gapsIn(sources: DisclosureSources, window: TimeWindow): Promise<TrailGap[]> {
  const records = await sources.log.continuations();
  if (records.length === 0) return [];
  let opened: ReturnType<typeof openContinuations>;
  try {
    opened = openContinuations(records, sources.keys, sources.hashes.sha256);
  } catch (error) {
    if (!(error instanceof ContinuationError)) throw error;
    throw new TrailIncompleteError(
      `the trail's statement of what it lost cannot be read or does not verify (${error.message}): no answer is given that could hide a loss; run case-read audit verify`,
    );
  }
  return opened
    .filter(
      (c) =>
        !(window.from !== undefined && c.broke.getTime() < window.from.getTime()) &&
        !(window.to !== undefined && c.lastKept !== null && c.lastKept.getTime() >= window.to.getTime()),
    )
    .map((c) => ({
      from: c.lastKept?.toISOString() ?? null,
      to: c.broke.toISOString(),
      recordsLost: c.lost,
      reason: c.reason,
    }));
}

/** Pass one: every disclosure read and the proof of them all checked; what is kept is where each one is. */
async function listOf(
  sources: DisclosureSources,
  crn: string,
  window: TimeWindow,
  deadline?: Deadline,
): Promise<DisclosureList> {
  const gaps = await gapsIn(sources, window);
  const archive = await openArchive(sources);
  const reading = new DisclosureReading(sources, archive, crn, window, Number.POSITIVE_INFINITY, deadline);
  let against = await checkpointToProveAgainst(sources);
  let leaves = new Leaves();
  let asked = false;
  for (;;) {
    leaves = new Leaves();
    let uncovered: number | undefined;
    for await (const { record, entry } of reading.all()) {
      if (against === undefined || record.seq > against.size) uncovered ??= record.seq;
      leaves.push(record.seq, leafHash(sources.hashes.sha256, entry));
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
  const count = leaves.seqs.length;
  if (count === 0 || against === undefined) {
    return { count: 0, gaps, checkpoint: undefined, parts: async function* () {} };
  }
  // The proof's hashes, made and checked once, set aside off the heap to be sent in pass two.
  const spill = await sources.spill();
  const written = new Chained(sources.hashes.sha256);
  try {
    for await (const piece of provenHashes(reading, leaves, against)) {
      await spill.append(piece);
      written.add(piece);
    }
  } catch (error) {
    await spill.close();
    throw error;
  }
  const checked = against;
  return {
    count,
    gaps,
    checkpoint: checked.note,
    parts: () =>
      sendable(new DisclosureReading(sources, archive, crn, window, checked.size), leaves, {
        spill,
        written,
      }),
  };
}

/** The proof's hashes as pass one set them aside, and the digest of what it wrote. */
interface SetAside {
  readonly spill: Spill;
  readonly written: Chained;
}

/**
 * Pass two: the same records read again, each the leaf pass one proved, then the proof's hashes
 * as pass one set them aside, each piece as it was written; what differs breaks the answer off.
 */
async function* sendable(
  reading: DisclosureReading,
  proved: Leaves,
  { spill, written }: SetAside,
): AsyncGenerator<DisclosurePart> {
  try {
    let at = 0;
    let batch: Disclosure[] = [];
    for await (const { record, entry } of reading.all()) {
      if (proved.seqs[at] !== record.seq || !sameHash(leafHash(reading.sha256, entry), proved.hashAt(at))) {
        throw new TrailIncompleteError(
          `the trail changed while it was read: record ${record.seq} is not what was proved the first time`,
        );
      }
      at++;
      batch.push(asDisclosure(record, entry));
      if (batch.length === BATCH) {
        yield { disclosures: batch };
        batch = [];
      }
    }
    if (at !== proved.seqs.length)
      throw new TrailIncompleteError(
        'the trail changed while it was read: records were missing the second time',
      );
    if (batch.length > 0) yield { disclosures: batch };
    const read = new Chained(reading.sha256);
    for await (const hashes of spill.pieces(HASHES * 32)) {
      read.add(hashes);
      yield { hashes };
    }
    if (!read.same(written))
      throw new TrailIncompleteError("the proof's hashes set aside were changed before they were sent");
  } finally {
    await spill.close();
  }
}
