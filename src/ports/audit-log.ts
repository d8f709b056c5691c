import type { AuditVerification } from '../domain/audit/chain-walker.js';
import type { AuditCheckpoint, ChainHead, CheckpointSet } from '../domain/audit/checkpoint.js';
import type { AuditQuery, AuditRecord, StoredAuditRecord } from '../domain/audit/record.js';
import type { Hash } from '../tlog/merkle.js';
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
  /**
   * Stores a checkpoint, and the cosignatures it carries if any (as {@link addCosignatures}
   * adds them: one stored already keeps what it holds); resolves once it is stored, rejects
   * when it cannot be.
   */
  saveCheckpoint(checkpoint: AuditCheckpoint): Promise<void>;
  /**
   * The stored checkpoint with the highest seq, if any, with the cosignatures kept with it;
   * with `withNote`, the highest that carries a signed note of the tree (those made before
   * the tree carry none).
   */
  newestCheckpoint(options?: { readonly withNote?: boolean }): Promise<AuditCheckpoint | undefined>;
  /**
   * Every stored checkpoint, lowest seq first, read a page at a time, each with the
   * cosignatures kept with it. A stored row that is not a well-formed checkpoint (its
   * cosignatures included) comes as `{ invalid }`, naming where it was found.
   */
  checkpoints(): AsyncIterable<AuditCheckpoint | { readonly invalid: string }>;
  /**
   * Keeps cosignature lines (`— NAME BASE64`, no newline) with the stored checkpoint
   * `checkpoint` (matched by its seq, keyId and signature; decisions §19): a line already
   * held is kept once, and lines added at once by another instance are all kept too.
   * Resolves once stored. Rejects, naming why, when the checkpoint is not stored, a line is
   * not a signature line, or the checkpoint would hold more than `MAX_COSIGNATURES`.
   */
  addCosignatures(checkpoint: AuditCheckpoint, lines: readonly string[]): Promise<void>;
  /**
   * The tree size each witness (by its vkey line) last cosigned, as this trail last learned
   * it: where the next request to that witness starts from. A stored size that is not well
   * formed is left out (the witness says its size when asked from the wrong one).
   */
  witnessSizes(): Promise<ReadonlyMap<string, number>>;
  /**
   * Records that the witness `vkey` holds `size`, replacing what was recorded for it.
   * Rejects a vkey that is empty, longer than 1024 characters or holds a control character,
   * and a size that is not a whole number from 0.
   */
  saveWitnessSize(vkey: string, size: number): Promise<void>;
}

/** The tree over the records as grown: its size, its root (none while empty), and the chain's head at that size. */
export interface TreeHead {
  readonly size: number;
  readonly root?: Hash;
  readonly head: ChainHead;
}

/**
 * The RFC 9162 Merkle tree over the records (decisions §14), stored beside them: the records
 * in seq order are its leaves. It follows the records rather than being written with each:
 * `growTree` catches it up, and the checkpointer calls it before it signs, off the request path.
 */
export interface AuditTree {
  /** Grows the stored tree over every record stored now and returns its head; a store opened only to be read refuses. */
  growTree(): Promise<TreeHead>;
  /** How many leaves the stored tree holds now. */
  treeSize(): Promise<number>;
  /** Stored hashes by stored index (each below `storedCount(treeSize())`); throws a MerkleError naming one not stored. */
  treeHashes(indexes: readonly number[]): Promise<Map<number, Hash>>;
  /** The records from seq `from` on (at most `limit` of them), oldest first, a batch at a time (constant memory). */
  recordsFrom(from: number, limit?: number): AsyncIterable<readonly StoredAuditRecord[]>;
}

/** A window of time: from `from` (inclusive) to `to` (exclusive); an absent end is open. */
export interface TimeWindow {
  readonly from?: Date;
  readonly to?: Date;
}

/**
 * The records naming one crn, read through an index by crn (decisions §22): a subject access
 * request reads only that person's records, never the whole trail, whatever its length.
 */
export interface AuditByCrn {
  /**
   * The records the store holds whose crn is `crn` and whose time is inside `window`, in seq
   * order, a batch at a time (bounded memory, however many there are); none of those the store
   * let go of (archived). Read through an index by crn: the work is that crn's records, not the
   * trail's. Rejects when the store cannot be read (never ends early as if there were no more).
   */
  recordsNaming(crn: string, window?: TimeWindow): AsyncIterable<readonly StoredAuditRecord[]>;
}

/**
 * The records that continue the trail after a loss (ADR 30, `case-read audit continue`): the
 * version-5 records, each carrying its signed statement. Few (one per loss), read through an
 * index of their own, and never let go of by {@link AuditRetention.forget}: they are how the
 * trail states what it lost, to `audit verify` and to every subject access answer.
 */
export interface AuditContinuations {
  /** Every continuation record the store holds, oldest first. Rejects when the store cannot be read. */
  continuations(): Promise<readonly StoredAuditRecord[]>;
}

/** What letting go of archived records did: the last one let go, how many, and the store's bytes on disk before and after. */
export interface Forgotten {
  /** The highest seq no longer held (the archive's boundary). */
  readonly upTo: number;
  /** Records removed by this call. */
  readonly records: number;
  /** The store's size on disk before and after, when the engine says (SQLite: file and WAL; PostgreSQL: the audit and tree tables). */
  readonly bytesBefore?: number | undefined;
  readonly bytesAfter?: number | undefined;
}

/** Who holds a trail's archive lock, as another run names them: the run (host, process) and since when. */
export interface ArchiveLockHolder {
  readonly who: string;
  readonly since: Date;
}

/** A trail's archive lock, held (see {@link AuditRetention.lockArchive}). */
export interface ArchiveLock {
  /**
   * Whether it is still this run's (it renews a lease that lapses), asked before the archive's
   * checkpoint is replaced and before the store lets go of records: a run that lost it stops.
   */
  stillHeld(): Promise<boolean>;
  /** Gives it up; a second call does nothing. */
  release(): Promise<void>;
}

/**
 * Keeping the store bounded (decisions §15): once records are archived (and the archive
 * checked), the store lets go of their text, and of their tree hashes but those of subtrees
 * of 256 leaves and more (what proofs of newer records, and the tree's edge at the boundary,
 * are made of). It records the boundary, so `verify` walks from it.
 */
export interface AuditRetention {
  /** Whether this store lets go of archived records (the JSONL file does not: it keeps every record). */
  readonly archives: boolean;
  /** The last record let go of (its seq and chain hash); seq 0 and the genesis hash when none. */
  archivedHead(): Promise<ChainHead>;
  /**
   * Lets go of records up to seq `upTo` (they must be inside the stored tree), a batch per
   * transaction so appends go on between, then gives the space back as the engine can.
   * Resolves once they are gone; the boundary is recorded before the first is removed.
   */
  forget(upTo: number): Promise<Forgotten>;
  /**
   * Takes the trail's archive lock (decisions §18): one `audit archive` of this trail at a
   * time, wherever it runs. `who` names this run (host and process) for the message another
   * run gives. It is the store's, so processes on different machines exclude each other; it
   * ends with {@link ArchiveLock.release}, or when the process holding it dies (PostgreSQL: its
   * connection closes; SQLite: a lease that lapses unless renewed, or at once when its process
   * on this host is gone). Held by another run: `busy`, naming it.
   */
  lockArchive(who: string): Promise<{ readonly held: ArchiveLock } | { readonly busy: ArchiveLockHolder }>;
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
 * - `recordsNaming` gives exactly the held records of one crn inside a window, in seq order,
 *   through an index by crn;
 * - `flush` resolves once every append made before it was stored or refused;
 * - checkpoints are stored and read back as given, several at one seq included;
 * - cosignatures added to a stored checkpoint, in one call or several, are read back with it
 *   (by `newestCheckpoint` and `checkpoints`) each once; adding to a checkpoint not stored
 *   rejects; the size saved for each witness is read back, the last one saved, after the
 *   store is opened again too;
 * - the tree grows over every record, keeps the hashes it stored, and its root at any size is
 *   the RFC 9162 root of the records up to it;
 * - after `forget(n)` the records up to n are gone (but continuation records, which stay),
 *   appends continue the chain from the head, `verify` walks from record n + 1 and still checks
 *   every signed root after n;
 * - a record appended with a continuation is stored as version 5, read back with it, and
 *   listed by `continuations`, oldest first.
 */
export interface AuditLog
  extends AuditWriter,
    AuditCheckpointStore,
    AuditTree,
    AuditRetention,
    AuditByCrn,
    AuditContinuations {
  append(record: AuditRecord, deadline?: Deadline): Promise<void>;
  flush(): Promise<void>;
  query(filter: AuditQuery): Promise<StoredAuditRecord[]>;
  verify(checkpoints?: CheckpointSet): Promise<AuditVerification>;
}
