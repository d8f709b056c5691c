import { auditEntryOf } from '../../domain/audit/canonical-text.js';
import type { ArchiveTiles, ArchiveTilesWriter } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { ArchiveLock, AuditLog } from '../../ports/audit-log.js';
import type { NoteSigner } from '../../ports/checkpoint-keys.js';
import { type Hash, leafHash, sameHash } from '../../tlog/merkle.js';
import { checkpointText, type NoteVerifier, signNote } from '../../tlog/note.js';
import {
  bundleOf,
  bundlePath,
  CHECKPOINT_PATH,
  TILE_WIDTH,
  tileHashIndexes,
  tilePath,
  tilesOf,
} from '../../tlog/tiles.js';
import { AuditArchiveError } from './archive-error.js';
import { keepWitnessed } from './archive-witnessed.js';
import { CrnIndexWriter } from './crn-index-write.js';
import {
  AuditProofError,
  newestNoted,
  openCheckpoint,
  provesExtension,
  type SignedTree,
  storedRoot,
} from './proving.js';

export { AuditArchiveError } from './archive-error.js';

/**
 * The audit trail's archive (decisions §15): the older records as a C2SP `tlog-tiles` tree of
 * files, written once and never changed (a later archive adds files beside them; only
 * `checkpoint`, the signed note of what the archive holds, is replaced), with its index by crn
 * (crn-index.ts) and the store's witnessed checkpoints that extend it (archive-witnessed.ts).
 * Its check on its own (`audit verify --archive`) is archive-verify.ts; one run at a time,
 * archive-lock.ts. The files are an {@link ArchiveTiles}'s (a directory:
 * src/adapters/tile-directory); SHA-256 and the keys' signature checks are handed in.
 */

export const CHECKPOINT_FILE = CHECKPOINT_PATH;

/**
 * Puts `bytes` at `path` unless a file is there; one that is must hold the same bytes. Whether
 * it was written (a file more).
 */
async function writeOnce(
  tiles: ArchiveTiles,
  writer: ArchiveTilesWriter,
  path: string,
  bytes: Uint8Array,
): Promise<boolean> {
  const put = await writer.putOnce(path, bytes);
  if (put === 'different') {
    throw new AuditArchiveError(
      `${path} is already in ${tiles.location} with other content: an archive file is never rewritten`,
    );
  }
  return put === 'written';
}

/** Opens a checkpoint; one no key given signed may be from before a rotation of the key: says what to give. */
async function afterRotation<T>(open: () => T | Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (error instanceof AuditProofError && error.why === 'no-key') {
      throw new AuditProofError(
        `${error.message} (signed before AUDIT_SIGNING_KEY was rotated? give that key's public half with --public-key)`,
      );
    }
    throw error;
  }
}

/**
 * Checks that `tiles` holds the entry bundles of records `from` + 1 … `to` (whole tiles), before
 * the store lets go of them: a file removed from the archive since it was written is named.
 */
export async function assertArchiveHolds(tiles: ArchiveTiles, from: number, to: number): Promise<void> {
  const missing: string[] = [];
  for (let index = Math.floor(from / TILE_WIDTH); index < to / TILE_WIDTH; index++) {
    if (!(await tiles.has(bundlePath(index)))) missing.push(bundlePath(index));
  }
  if (missing.length > 0) {
    throw new AuditArchiveError(
      `${tiles.location} lacks ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}: the store keeps those records; run case-read audit verify --archive`,
    );
  }
}

/** Refuses to go on without the trail's archive lock (decisions §18): `next` says what this run will not do. */
export async function stillHolding(lock: ArchiveLock, next: string): Promise<void> {
  if (!(await lock.stillHeld())) {
    throw new AuditArchiveError(
      `this run no longer holds the trail's archive lock (its lease lapsed, or its connection to the store was lost): it stops before it ${next}; run it again`,
    );
  }
}

/** How many bundles a run writes between two checks that it still holds the archive lock (which renew a lease). */
const BUNDLES_PER_LOCK_CHECK = 64;

/** The size the archive's checkpoint signs (0 when there is none yet), opened with `keys`. */
export async function archivedSize(
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
): Promise<{ size: number; root?: Hash; origin?: string }> {
  const bytes = await tiles.read(CHECKPOINT_FILE);
  if (bytes === undefined) return { size: 0 };
  const note = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  const { body } = openCheckpoint(note, keys, tiles.locationOf(CHECKPOINT_FILE));
  return { size: body.size, root: body.root, origin: body.origin };
}

export interface ArchiveWritten {
  readonly from: number;
  readonly to: number;
  readonly files: number;
}

/** How an archive is written: the records a group of its crn index covers (tests make it small; 65536 otherwise). */
export interface ArchiveOptions {
  readonly crnGroupSize?: number | undefined;
}

/**
 * Archives the records up to `size` (a multiple of 256, covered by a signed checkpoint of the
 * tree) to `tiles`: their entry bundles, the hash tiles of the tree of `size`, its crn index
 * (crn-index.ts; an archive written without one gets it whole, even when nothing is new), the
 * store's checkpoints of `size` records or more that witnesses cosigned, each with its proof
 * from the tree of `size` (archive-witnessed.ts), and its signed checkpoint. Every entry is
 * checked against the stored tree, and the stored tree against the newest signed checkpoint
 * (and the archive's own, when it holds one), before anything is written: what does not match
 * is refused, naming it. `keys` check the checkpoints' signatures.
 */
export async function writeArchive(
  hashes: AuditHashes,
  log: AuditLog,
  tiles: ArchiveTiles,
  size: number,
  signer: NoteSigner,
  keys: readonly NoteVerifier[],
  lock: ArchiveLock,
  options: ArchiveOptions = {},
): Promise<ArchiveWritten> {
  const writer = await tiles.openWriter();
  try {
    return await archiveWith(hashes, log, tiles, writer, size, signer, keys, lock, options);
  } finally {
    await writer.close();
  }
}

async function archiveWith(
  hashes: AuditHashes,
  log: AuditLog,
  tiles: ArchiveTiles,
  writer: ArchiveTilesWriter,
  size: number,
  signer: NoteSigner,
  keys: readonly NoteVerifier[],
  lock: ArchiveLock,
  options: ArchiveOptions,
): Promise<ArchiveWritten> {
  const dir = tiles.location;
  const held = await afterRotation(() => archivedSize(tiles, keys));
  if (size % TILE_WIDTH !== 0)
    throw new AuditArchiveError(`${size} records are not whole tiles of ${TILE_WIDTH}`);
  const letGo = (await log.archivedHead()).seq;
  if (letGo > held.size) {
    throw new AuditArchiveError(
      `the store let go of records 1..${letGo} after archiving them, and ${dir} holds ${held.size === 0 ? 'none' : `only 1..${held.size}`}: archive to the directory that holds them`,
    );
  }
  // Whatever is asked, the archive must be this trail's: the stored tree of its size makes the
  // root its checkpoint signs (the store may then let go of what it holds).
  if (held.root !== undefined && !sameHash((await storedRoot(hashes, log, held.size)).root, held.root)) {
    throw new AuditArchiveError(
      `${dir} is not an archive of this trail: the tree of its ${held.size} records is not the stored one`,
    );
  }
  const put = (path: string, bytes: Uint8Array) => writeOnce(tiles, writer, path, bytes);
  const holding = () => stillHolding(lock, 'writes more');
  const crnIndex = await CrnIndexWriter.open(
    { hashes, log, tiles, keys, signer, put, stillHolding: holding, groupSize: options.crnGroupSize },
    held,
  );
  if (size <= held.size) {
    await crnIndex.seal(held.size, held.root);
    return { from: held.size, to: held.size, files: crnIndex.written };
  }
  const newest = await newestNoted(log);
  // The newest stored checkpoint is signed by the keys given: a stored note is not taken on trust.
  await afterRotation(() =>
    openCheckpoint(newest.note, keys, `the newest stored checkpoint (${newest.body.size} records)`),
  );
  if (newest.body.size < size) {
    throw new AuditArchiveError(
      `the newest checkpoint covers ${newest.body.size} records, not ${size}: records are archived once a checkpoint covers them`,
    );
  }
  const { root } = await storedRoot(hashes, log, size);
  const archived: SignedTree = { size, root };
  if (!(await provesExtension(hashes, log, archived, newest.body))) {
    throw new AuditArchiveError(
      'the stored tree is not the one the newest checkpoint signed; run case-read audit verify',
    );
  }
  if (held.root !== undefined) {
    if (!(await provesExtension(hashes, log, { size: held.size, root: held.root }, archived))) {
      throw new AuditArchiveError(
        `the trail does not extend the archive in ${dir}: it was rewritten, or the archive is another log's`,
      );
    }
  }
  let files = 0;
  let bundle: Uint8Array[] = [];
  let crns: (string | null)[] = [];
  let index = held.size / TILE_WIDTH;
  for await (const batch of log.recordsFrom(held.size + 1, size - held.size)) {
    for (const record of batch) {
      const expected = index * TILE_WIDTH + bundle.length + 1;
      if (record.seq !== expected) {
        throw new AuditArchiveError(
          `the store holds record ${record.seq} where ${expected} was expected: records were let go of while this archive ran (another archive of the store at once?); nothing of them was written; run it again`,
        );
      }
      const text = auditEntryOf(record);
      if (text === undefined)
        throw new AuditArchiveError(`record ${record.seq} has a format this service does not know`);
      bundle.push(new TextEncoder().encode(text));
      crns.push(record.crn);
      if (bundle.length < TILE_WIDTH) continue;
      // The entries' leaf hashes are the level-0 tile's: a record changed since the tree grew is refused.
      const indexes = tileHashIndexes({ level: 0, index, width: TILE_WIDTH });
      const stored = await log.treeHashes(indexes);
      bundle.forEach((entry, i) => {
        const leaf = stored.get(indexes[i] as number) as Hash;
        if (!sameHash(leafHash(hashes.sha256, entry), leaf)) {
          throw new AuditArchiveError(
            `record ${index * TILE_WIDTH + i + 1} is not the leaf the tree holds: it was changed; run case-read audit verify`,
          );
        }
      });
      if (await writeOnce(tiles, writer, bundlePath(index), bundleOf(bundle))) files++;
      await crnIndex.bundle(index, crns);
      bundle = [];
      crns = [];
      index++;
      if (index % BUNDLES_PER_LOCK_CHECK === 0) await stillHolding(lock, 'writes more');
    }
  }
  if (index * TILE_WIDTH !== size)
    throw new AuditArchiveError(`the store holds records only up to ${index * TILE_WIDTH}`);
  for (const tile of tilesOf(size, held.size)) {
    const indexes = tileHashIndexes(tile);
    const stored = await log.treeHashes(indexes);
    const tileHashes = Buffer.concat(indexes.map((i) => stored.get(i) as Hash));
    if (await writeOnce(tiles, writer, tilePath(tile), tileHashes)) files++;
  }
  // The crn index's last group and its note before the checkpoint: a checkpoint is never without them.
  await crnIndex.seal(size, root);
  // The witnessed checkpoints that extend it: the archive is held to a policy without the store.
  if (await keepWitnessed(hashes, log, tiles, put, archived, keys)) files++;
  // The checkpoint last, and whole: a reader never sees one that signs what is not written;
  // and once it is in place, everything it signs is (the store may then let go of them).
  const note = signNote(checkpointText(signer.name, size, root), signer);
  // Only ever a larger tree of the same log: the checkpoint this run began from must still be there.
  const now = await archivedSize(tiles, keys);
  if (
    now.size !== held.size ||
    (held.root !== undefined && !sameHash(now.root ?? new Uint8Array(), held.root))
  ) {
    throw new AuditArchiveError(
      `${dir}'s checkpoint changed while this run wrote (it signs ${now.size} records, not ${held.size}: another run?): this run leaves it as it is`,
    );
  }
  await stillHolding(lock, "replaces the archive's checkpoint");
  await writer.replaceCheckpoint(new TextEncoder().encode(note));
  return { from: held.size, to: size, files: files + crnIndex.written + 1 };
}
