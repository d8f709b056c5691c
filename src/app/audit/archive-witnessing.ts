/**
 * `audit verify --archive --policy` (decisions §19): the archive's checkpoint against the
 * witness policy. It is witnessed when it meets the quorum itself (an archive's checkpoint is
 * signed at a size of whole tiles, rarely one a witness saw); else when a checkpoint the archive
 * keeps (archive-witnessed.ts) meets it and its kept proof shows it extending the archive's
 * tree, from the archive's files alone; else when the store holds a newer checkpoint that meets
 * it and the store's tree proves that one extends the archive's. Then the witnesses vouched for
 * every archived record too. Anything less is refused, naming why. The kept checkpoints are
 * checked against the archive's tiles by `audit verify --archive` with or without a policy.
 */
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { AuditLog } from '../../ports/audit-log.js';
import { type Hash, sameHash, verifyConsistency } from '../../tlog/merkle.js';
import { type CheckpointBody, checkpointBodyOf, type NoteVerifier } from '../../tlog/note.js';
import { rootFrom } from '../../tlog/proofs.js';
import { AuditArchiveError, CHECKPOINT_FILE } from './archive.js';
import { ArchiveReader } from './archive-reader.js';
import { type KeptCheckpoint, parseKept, witnessedPath } from './archive-witnessed.js';
import { AuditProofError, openCheckpoint, provesExtension, type SignedTree } from './proving.js';
import {
  lastWitnessed,
  notWitnessedReason,
  type OpenNote,
  type PolicyCheck,
  quorumOf,
  type Witnessing,
  witnessedCheckpoints,
  witnessingOf,
  witnessList,
} from './witnessed.js';

/** How the archive stood against the policy: witnessed (by itself, a checkpoint it keeps, or through the store), or why not. */
export type ArchiveWitnessing =
  | {
      readonly ok: true;
      /**
       * `itself`; `the archive`: a witnessed checkpoint it keeps (`kept`) shown to extend it;
       * `the store`: a newer witnessed checkpoint of the store shown to extend it.
       */
      readonly through: 'itself' | 'the archive' | 'the store';
      /** The size of the witnessed checkpoint. */
      readonly size: number;
      readonly witnesses: readonly string[];
      /** With `the archive`: the file that keeps it. */
      readonly kept?: string;
    }
  | { readonly ok: false; readonly reason: string };

/** The archive's checkpoint, opened with `keys`, and how it stands against the policy by its own cosignatures. */
export async function archiveCheckpointWitnessing(
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
  check: PolicyCheck,
): Promise<{ readonly body: CheckpointBody; readonly witnessing: Witnessing }> {
  const bytes = await tiles.read(CHECKPOINT_FILE);
  if (bytes === undefined) throw new AuditArchiveError(`${tiles.location} holds no ${CHECKPOINT_FILE}`);
  const note = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  const { body } = openCheckpoint(note, keys, tiles.locationOf(CHECKPOINT_FILE));
  return { body, witnessing: witnessingOf(note, check) };
}

/** The archive's tree: its checkpoint's origin, size and root, and its hash tiles to make the root of a smaller tree of. */
interface ArchiveTree extends SignedTree {
  readonly origin: string;
  readonly reader: ArchiveReader;
}

/**
 * One checkpoint kept in `path` with the archive's of `size` records, checked against the
 * archive's tree: its note opened with `keys` (one signed by a key not given, from before a
 * rotation, is read unsigned when `signed` is not asked: the policy's check asks it), of the
 * archive's log, its proof showing it extending the tree of `size`, and, when the archive holds
 * the tree it signs, that tree's root its own. Its body, or what is wrong.
 */
async function checkedKept(
  hashes: AuditHashes,
  tree: ArchiveTree,
  keys: readonly NoteVerifier[],
  path: string,
  size: number,
  kept: KeptCheckpoint,
  signed: boolean,
): Promise<CheckpointBody | { readonly wrong: string }> {
  let body: CheckpointBody;
  try {
    body = openCheckpoint(kept.note, keys, `${path}: its checkpoint`).body;
  } catch (error) {
    if (!(error instanceof AuditProofError)) throw error;
    const claimed = checkpointBodyOf(kept.note);
    if (signed || error.why !== 'no-key' || 'invalid' in claimed) return { wrong: error.message };
    body = claimed;
  }
  const what = `${path}: its checkpoint of ${body.size} records`;
  if (body.origin !== tree.origin)
    return { wrong: `${what} is of the log ${body.origin}, not ${tree.origin}` };
  const sha256 = hashes.sha256;
  const rootOf = async (n: number): Promise<Hash> =>
    n === tree.size ? tree.root : rootFrom(sha256, tree.reader.tileHashes, n);
  if (!verifyConsistency(sha256, size, body.size, await rootOf(size), body.root, kept.consistency)) {
    return {
      wrong: `${what} is not shown to extend the archive's tree of ${size} records: the file was changed, or the checkpoint is of another trail`,
    };
  }
  if (body.size <= tree.size && !sameHash(await rootOf(body.size), body.root)) {
    return {
      wrong: `${what} does not sign the archive's tree of ${body.size} records: the file was changed, or the checkpoint is of another trail`,
    };
  }
  return body;
}

/** The checkpoints kept with the archive's of `size` records: none when there is no such file; what is wrong with it as a refusal. */
async function keptWith(
  tiles: ArchiveTiles,
  size: number,
): Promise<KeptCheckpoint[] | { readonly wrong: string }> {
  const path = witnessedPath(size);
  const bytes = await tiles.read(path);
  if (bytes === undefined) return [];
  const kept = parseKept(bytes, size);
  return 'invalid' in kept
    ? { wrong: `${path} is not the witnessed checkpoints audit archive keeps: ${kept.invalid}` }
    : kept;
}

/**
 * `audit verify --archive`'s check of the witnessed checkpoints the archive keeps, once its
 * tiles are checked: every `witnessed/N` of `sizes` (this archive's size, or an earlier one's)
 * read strictly, and each checkpoint it keeps checked against the archive's tree
 * ({@link checkedKept}; the cosignatures are the policy's to check). What is wrong, naming the file.
 */
export async function keptWitnessedProblem(
  hashes: AuditHashes,
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
  archived: SignedTree & { readonly origin: string },
  sizes: readonly number[],
): Promise<{ readonly reason: string; readonly files: readonly string[] } | undefined> {
  const tree = { ...archived, reader: await ArchiveReader.open(hashes, tiles, keys) };
  for (const size of [...sizes].sort((a, b) => a - b)) {
    const path = witnessedPath(size);
    const kept = await keptWith(tiles, size);
    if ('wrong' in kept) return { reason: kept.wrong, files: [path] };
    for (const checkpoint of kept) {
      const checked = await checkedKept(hashes, tree, keys, path, size, checkpoint, false);
      if ('wrong' in checked) return { reason: checked.wrong, files: [path] };
    }
  }
  return undefined;
}

/** How the checkpoints the archive keeps with its own stand against the policy: one that meets it, a refusal, or what they are. */
export type KeptWitnessing =
  | { readonly met: { readonly path: string; readonly size: number; readonly witnesses: readonly string[] } }
  | { readonly refused: string }
  /** None meets it: what it keeps, in words, for the refusal. */
  | { readonly short: string };

/**
 * The checkpoints the archive keeps with its checkpoint `archived` (`witnessed/SIZE`) against
 * the policy, from the archive's files alone: each must open with `keys` and be shown to extend
 * the archive's tree ({@link checkedKept}), and a cosignature of a policy witness that does not
 * verify is refused, whatever the others; the newest one that meets the quorum witnesses it.
 */
export async function keptWitnessing(
  hashes: AuditHashes,
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
  check: PolicyCheck,
  archived: CheckpointBody,
): Promise<KeptWitnessing> {
  const path = witnessedPath(archived.size);
  const kept = await keptWith(tiles, archived.size);
  if ('wrong' in kept) return { refused: kept.wrong };
  if (kept.length === 0) return { short: `it keeps no witnessed checkpoint that extends it (no ${path})` };
  const tree = { ...archived, reader: await ArchiveReader.open(hashes, tiles, keys) };
  let met: { path: string; size: number; witnesses: readonly string[] } | undefined;
  const seen: string[] = [];
  for (const checkpoint of kept) {
    const body = await checkedKept(hashes, tree, keys, path, archived.size, checkpoint, true);
    if ('wrong' in body) return { refused: body.wrong };
    const witnessing = witnessingOf(checkpoint.note, check);
    if (witnessing.refused !== undefined)
      return { refused: `${path}: its checkpoint of ${body.size} records is refused: ${witnessing.refused}` };
    if (witnessing.met && body.size >= (met?.size ?? 0))
      met = { path, size: body.size, witnesses: witnessing.witnesses };
    seen.push(`${body.size} records, cosigned by ${witnessList(witnessing.witnesses)}`);
  }
  if (met !== undefined) return { met };
  return { short: `nor is any checkpoint it keeps that extends it (${path}: ${seen.join('; ')})` };
}

/**
 * Whether the store `log` shows the archive's checkpoint `archived` extended by a checkpoint
 * that meets the policy: its newest witnessed one (each note opened by `open`), no older than the
 * archive's, with the same root at the same size or a consistency proof from the store's tree.
 * `own`: how the archive stands without the store, which a refusal begins with.
 */
export async function witnessedThroughStore(
  hashes: AuditHashes,
  log: AuditLog,
  archived: SignedTree,
  check: PolicyCheck,
  open: OpenNote,
  now: Date,
  own = `its checkpoint (${archived.size} records) is not witnessed`,
): Promise<ArchiveWitnessing> {
  const found = await witnessedCheckpoints(log, check, open, (reason) => new AuditProofError(reason));
  const met = found.met;
  if (met === undefined) {
    return {
      ok: false,
      reason: `${own}, and no stored checkpoint meets ${quorumOf(check)} to extend it: ${notWitnessedReason(found, check, now) ?? lastWitnessed(met, now)}`,
    };
  }
  const witnessed = {
    ok: true,
    through: 'the store',
    size: met.body.size,
    witnesses: met.witnessing.witnesses,
  } as const;
  if (met.body.size < archived.size) {
    return {
      ok: false,
      reason: `${own}, and the store's newest checkpoint that meets ${quorumOf(check)} (${met.body.size} records, ${met.checkpoint.time}) is older than it: the records after ${met.body.size} are vouched for by no witness yet`,
    };
  }
  if (met.body.size === archived.size) {
    return sameHash(met.body.root, archived.root)
      ? witnessed
      : {
          ok: false,
          reason: `the store's witnessed checkpoint of ${met.body.size} records signs another root than the archive's checkpoint: two different trails were signed`,
        };
  }
  if (!(await provesExtension(hashes, log, archived, met.body, true))) {
    return {
      ok: false,
      reason: `${own}, and the store's tree does not show the witnessed checkpoint of ${met.body.size} records extending it: the archive, or the store, holds another trail`,
    };
  }
  return witnessed;
}

/** The witnesses named, for an {@link ArchiveWitnessing} that is ok. */
export const describeArchiveWitnessing = (
  witnessing: Extract<ArchiveWitnessing, { ok: true }>,
  check: PolicyCheck,
): string =>
  witnessing.through === 'itself'
    ? `its checkpoint is witnessed: cosigned by ${witnessList(witnessing.witnesses)}, meeting ${quorumOf(check)}`
    : witnessing.through === 'the archive'
      ? `its checkpoint is extended by the checkpoint of ${witnessing.size} records it keeps (${witnessing.kept}), cosigned by ${witnessList(witnessing.witnesses)}, meeting ${quorumOf(check)}`
      : `its checkpoint is extended by the store's checkpoint of ${witnessing.size} records, cosigned by ${witnessList(witnessing.witnesses)}, meeting ${quorumOf(check)}`;
