import { auditEntryOf, auditLeafHash } from '../../domain/audit/canonical-text.js';
import type { ArchivedStart } from '../../domain/audit/chain.js';
import { AuditChainWalker, type AuditVerification } from '../../domain/audit/chain-walker.js';
import type { AuditCheckpoint } from '../../domain/audit/checkpoint.js';
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { AuditLog, AuditTree } from '../../ports/audit-log.js';
import {
  Frontier,
  frontierIndexes,
  type Hash,
  leafHash,
  rootOfFrontier,
  sameHash,
} from '../../tlog/merkle.js';
import {
  type CheckpointBody,
  checkpointBodyOf,
  type NoteRefusal,
  type NoteVerifier,
  openCheckpointNote,
  verifyWith,
} from '../../tlog/note.js';
import { type HashSource, proveFrom, rootFrom } from '../../tlog/proofs.js';

/**
 * The questions the audit tree answers in O(log n) (decisions §14): a record's inclusion in a
 * signed tree, one signed tree extending another, and a trail checked from a saved checkpoint
 * on. Each answer is checked against the signed roots before it is given: a stored tree that
 * does not make the signed root is refused, never handed out. The proofs are made by the one
 * proof builder (src/tlog/proofs.ts) over a source of the tree's hashes: the store's here
 * ({@link storeHashes}), the archive's hash tiles in archive-reader.ts. SHA-256 is handed in
 * ({@link AuditHashes}), and the signatures are checked by the keys given ({@link NoteVerifier}).
 */

/** A question the stored trail cannot answer, or an answer it contradicts; the message says which. */
export class AuditProofError extends Error {
  override readonly name = 'AuditProofError';
  constructor(
    message: string,
    /** Why a checkpoint was refused, when it was (openCheckpoint): for a caller to act on, never its words. */
    readonly why?: NoteRefusal | 'not-a-checkpoint' | 'another-log',
  ) {
    super(message);
  }
}

/** A signed checkpoint note, opened with the keys given: its body, and the note's text as signed. */
export interface OpenedCheckpoint {
  readonly body: CheckpointBody;
  readonly note: string;
}

/** Opens a checkpoint note with `keys` (each checks its own signatures); the reason it cannot be used otherwise. */
export function openCheckpoint(note: string, keys: readonly NoteVerifier[], what: string): OpenedCheckpoint {
  // The log it names first (its signatures unchecked yet): keys of another log's name cannot
  // open it, whatever key they are, and saying so beats "no signature is by a key given".
  const claimed = checkpointBodyOf(note);
  if (!('invalid' in claimed) && !keys.some((k) => k.name === claimed.origin)) {
    throw new AuditProofError(
      `${what} is of the log ${claimed.origin}, not of ${keys.map((k) => k.name).join(', ')}: a log keeps its origin for life (give the origin it was signed under; a new origin means a new trail)`,
      'another-log',
    );
  }
  const opened = openCheckpointNote(note, keys, verifyWith(keys));
  if (!opened.ok) throw new AuditProofError(`${what}: ${opened.reason}`, opened.why);
  const { body } = opened;
  if (!keys.some((k) => k.name === body.origin)) {
    throw new AuditProofError(
      `${what} is of the log ${body.origin}, not of ${keys.map((k) => k.name).join(', ')}`,
      'another-log',
    );
  }
  return { body, note };
}

/**
 * The newest stored checkpoint with a note, and the tree it signs (its signature unchecked
 * here: whoever receives it checks it, as `audit archive` does with its key), or an error
 * saying there is none yet.
 */
export async function newestNoted(
  log: AuditLog,
): Promise<{ readonly checkpoint: AuditCheckpoint; readonly note: string; readonly body: CheckpointBody }> {
  const newest = await log.newestCheckpoint({ withNote: true });
  if (newest?.note === undefined) {
    throw new AuditProofError(
      'the store holds no checkpoint of the tree yet: serve signs one every AUDIT_CHECKPOINT_SECONDS when AUDIT_SIGNING_KEY is set',
    );
  }
  const body = checkpointBodyOf(newest.note);
  if ('invalid' in body)
    throw new AuditProofError(
      `the stored checkpoint at seq ${newest.seq} is not a checkpoint note: ${body.invalid}`,
    );
  return { checkpoint: newest, note: newest.note, body };
}

/** The stored tree's hashes as a source of proofs: read in one query, in ascending order. */
export const storeHashes = (log: Pick<AuditTree, 'treeHashes'>): HashSource => ({
  hashes: (indexes) => log.treeHashes([...indexes].sort((a, b) => a - b)),
});

/** The record `seq` and its entry (the exact bytes of its leaf), read from the store. */
export async function recordAt(
  log: AuditLog,
  seq: number,
): Promise<{ record: StoredAuditRecord; entry: Uint8Array }> {
  for await (const batch of log.recordsFrom(seq, 1)) {
    const record = batch[0];
    if (record?.seq !== seq) break;
    const text = auditEntryOf(record);
    if (text === undefined)
      throw new AuditProofError(`record ${seq} has a format version this service does not know`);
    return { record, entry: new TextEncoder().encode(text) };
  }
  const archived = (await log.archivedHead()).seq;
  throw new AuditProofError(
    seq <= archived
      ? `the store holds no record ${seq}: records 1..${archived} were archived and let go of; prove it from the archive (case-read audit prove --seq ${seq} --archive DIR)`
      : `the store holds no record ${seq}`,
  );
}

/**
 * The inclusion proof of record `seq` (leaf seq − 1) in the signed tree `checkpoint`, checked
 * against its root before it is given.
 */
export async function proveInclusion(
  hashes: AuditHashes,
  log: AuditLog,
  seq: number,
  checkpoint: CheckpointBody,
): Promise<{ readonly record: StoredAuditRecord; readonly entry: Uint8Array; readonly proof: Hash[] }> {
  if (seq > checkpoint.size) {
    throw new AuditProofError(
      `record ${seq} is after the newest checkpoint of the tree (${checkpoint.size} records): prove it after the next checkpoint`,
    );
  }
  const { record, entry } = await recordAt(log, seq);
  const proof = await proveFrom(hashes.sha256, storeHashes(log), {
    inclusion: seq - 1,
    leaf: leafHash(hashes.sha256, entry),
    size: checkpoint.size,
    root: checkpoint.root,
  });
  if (proof === undefined) {
    throw new AuditProofError(
      `record ${seq} as stored is not the leaf the checkpoint of ${checkpoint.size} records signed: the record, or the stored tree, was changed; run case-read audit verify`,
    );
  }
  return { record, entry, proof };
}

/**
 * Why the stored tree cannot give a consistency proof from `oldSize` to `newSize`, thrown;
 * nothing when it can. With `acrossArchived`, a tree ending inside the records the store let
 * go of is asked all the same (an archive's, of whole tiles: see {@link provesExtension}).
 */
async function canProveConsistency(
  log: AuditLog,
  oldSize: number,
  newSize: number,
  acrossArchived = false,
): Promise<void> {
  if (!Number.isSafeInteger(oldSize) || oldSize < 1 || oldSize > newSize) {
    throw new AuditProofError(`a tree of ${newSize} records cannot be proven to extend one of ${oldSize}`);
  }
  const grown = await log.treeSize();
  if (newSize > grown) throw new AuditProofError(`the stored tree holds ${grown} records, not ${newSize}`);
  if (acrossArchived) return;
  const archived = (await log.archivedHead()).seq;
  if (oldSize < archived) {
    throw new AuditProofError(
      `the tree of ${oldSize} records ends inside records 1..${archived}, which were archived and let go of: prove it from the archive (case-read audit prove --consistency ${oldSize} --archive DIR), then from the archive's checkpoint on`,
    );
  }
}

/**
 * The consistency proof from the tree of `oldSize` to the tree of `newSize` records, checked
 * before it is given against the root the checkpoint `signed` signs: to it directly when
 * `newSize` is its size, else through the stored tree of `newSize`, itself proven to extend to
 * it. The old root is the stored tree's: whoever holds a checkpoint of `oldSize` compares. A
 * tree after the signed one has no root to check against, and is refused.
 */
export async function proveConsistency(
  hashes: AuditHashes,
  log: AuditLog,
  oldSize: number,
  newSize: number,
  signed: SignedTree,
): Promise<Hash[]> {
  await canProveConsistency(log, oldSize, newSize);
  if (newSize > signed.size) {
    throw new AuditProofError(
      `the tree of ${newSize} records is after the newest checkpoint (${signed.size} records): no signed root checks its proof; prove it after the next checkpoint`,
    );
  }
  const source = storeHashes(log);
  const newer =
    newSize === signed.size
      ? signed
      : { size: newSize, root: await rootFrom(hashes.sha256, source, newSize) };
  const proof = await proveFrom(hashes.sha256, source, {
    consistency: oldSize,
    size: newSize,
    roots: { old: await rootFrom(hashes.sha256, source, oldSize), new: newer.root },
  });
  if (proof === undefined || (newer !== signed && !(await provesExtension(hashes, log, newer, signed)))) {
    throw new AuditProofError(
      `the stored tree of ${newSize} records does not make the root the checkpoint of ${signed.size} records signed: the stored tree was changed; run case-read audit verify`,
    );
  }
  return proof;
}

/** A tree by its size and root (a checkpoint's body, say). */
export interface SignedTree {
  readonly size: number;
  readonly root: Hash;
}

/**
 * Whether the stored tree proves that `newer` extends `older` (a consistency proof from
 * `older.size` to `newer.size` made of the stored hashes, checked against both roots); the
 * reason it cannot be asked is thrown as {@link proveConsistency} throws it. With
 * `acrossArchived`, `older` may end inside the records the store let go of: an archive's
 * checkpoint, of whole tiles of 256, whose proof needs only the hashes of 256 leaves and more
 * there, which the store keeps when it lets go (a hash it does not hold is a MerkleError
 * naming it).
 */
export async function provesExtension(
  hashes: AuditHashes,
  log: AuditLog,
  older: SignedTree,
  newer: SignedTree,
  acrossArchived = false,
): Promise<boolean> {
  await canProveConsistency(log, older.size, newer.size, acrossArchived);
  const proof = await proveFrom(hashes.sha256, storeHashes(log), {
    consistency: older.size,
    size: newer.size,
    roots: { old: older.root, new: newer.root },
  });
  return proof !== undefined;
}

/** The root of the stored tree of `size` records, and its frontier (the hashes it is made of). */
export async function storedRoot(
  hashes: AuditHashes,
  log: AuditLog,
  size: number,
): Promise<{ root: Hash; frontier: Hash[] }> {
  const indexes = frontierIndexes(size);
  const found = await log.treeHashes(indexes);
  const frontier = indexes.map((i) => found.get(i) as Hash);
  return { root: rootOfFrontier(hashes.sha256, frontier), frontier };
}

/** What `audit verify --since` found. */
export type SinceVerification = AuditVerification & {
  readonly since: number;
  readonly newest: number;
};

/**
 * `audit verify --since`: the newest signed tree (`newest`) extends the one saved earlier
 * (`old`), and every record after `old` verifies: its chain link and hash, and, up to
 * `newest`, the tree the records make from `old`'s frontier reaches `newest`'s signed root.
 * Records after `newest` are covered by the chain alone, as in a full verify. The work is the
 * records after `old` and a few dozen stored hashes, whatever the trail's length.
 */
export async function verifySince(
  hashes: AuditHashes,
  log: AuditLog,
  old: CheckpointBody,
  newest: CheckpointBody,
): Promise<SinceVerification> {
  const broken = (brokenAt: number, records: number, reason: string): SinceVerification => ({
    ok: false,
    records,
    brokenAt,
    reason,
    since: old.size,
    newest: newest.size,
  });
  if (newest.size < old.size) {
    return broken(
      newest.size + 1,
      0,
      `the store's newest checkpoint (${newest.size} records) is older than the one given (${old.size}): checkpoints or records were removed`,
    );
  }
  if (old.size === 0)
    return broken(1, 0, 'the checkpoint given signs an empty tree: verify the whole trail instead');
  // The stored tree agrees with both signed roots: the newest extends the old.
  if (!(await provesExtension(hashes, log, old, newest))) {
    return broken(
      1,
      0,
      `the trail's newest checkpoint does not extend the one given: the trail up to record ${old.size} was rewritten after it was signed`,
    );
  }
  const start = await storedRoot(hashes, log, old.size);
  if (!sameHash(start.root, old.root)) {
    return broken(
      1,
      0,
      `the stored tree of ${old.size} records is not the one the checkpoint given signed: it was rewritten`,
    );
  }
  // The walk starts at the old checkpoint's last record, or, when the store let go of it
  // (archived), at the archive's boundary: the stored tree there is checked by the newest
  // signed root the records after it must make.
  const archived = await log.archivedHead();
  let begin: ArchivedStart;
  if (archived.seq >= old.size) {
    begin = { ...archived, frontier: (await storedRoot(hashes, log, archived.seq)).frontier };
  } else {
    // The last record the old checkpoint covers is its last leaf: the chain continues from it.
    const last = await proveInclusion(hashes, log, old.size, old).catch((error: unknown) => {
      if (error instanceof AuditProofError) return undefined;
      throw error;
    });
    if (last === undefined) {
      return broken(
        old.size,
        0,
        `record ${old.size}, the last the checkpoint given covers, was changed or removed`,
      );
    }
    begin = { seq: old.size, hash: last.record.hash, frontier: start.frontier };
  }
  if (begin.seq > newest.size) {
    return broken(
      begin.seq,
      0,
      `the store let go of records up to ${begin.seq}, past the newest checkpoint (${newest.size}): its checkpoints were removed`,
    );
  }
  const walker = AuditChainWalker.after(begin, hashes.sha256Hex);
  const tree = new Frontier(hashes.sha256, begin.seq, begin.frontier);
  if (begin.seq === newest.size && !sameHash(tree.root(), newest.root)) {
    return broken(
      begin.seq,
      0,
      `the stored tree of ${begin.seq} records is not the one the newest checkpoint signed`,
    );
  }
  let records = 0;
  for await (const batch of log.recordsFrom(begin.seq + 1)) {
    for (const record of batch) {
      records++;
      if (!walker.next(record)) return { ...walker.result(), since: old.size, newest: newest.size };
      if (record.seq <= newest.size) {
        // The walker has checked the record's hash against its text: from format 4 it is the leaf hash.
        tree.push(auditLeafHash(record, hashes.sha256));
        if (record.seq === newest.size && !sameHash(tree.root(), newest.root)) {
          return broken(
            record.seq,
            records,
            `the records after the checkpoint given do not make the newest checkpoint's root: one of records ${old.size + 1}..${newest.size} was changed after it was signed`,
          );
        }
      }
    }
  }
  if (tree.size < newest.size) {
    return broken(
      tree.size + 1,
      records,
      `records missing after seq ${tree.size}: the newest checkpoint covers ${newest.size}`,
    );
  }
  const result = walker.result();
  return { ...result, records, since: old.size, newest: newest.size };
}
