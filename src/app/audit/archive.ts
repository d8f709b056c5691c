import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { auditEntryOf } from '../../domain/audit/canonical-text.js';
import type { AuditLog } from '../../ports/audit-log.js';
import type { NoteSigner } from '../../ports/checkpoint-keys.js';
import { Frontier, type Hash, leafHash, sameHash, verifyConsistency } from '../../tlog/merkle.js';
import { checkpointText, type NoteVerifierKey, signNote } from '../../tlog/note.js';
import {
  bundleOf,
  bundlePath,
  entriesOf,
  TILE_WIDTH,
  type Tile,
  tileHashIndexes,
  tileOfPath,
  tilePath,
  tileRoot,
  tilesOf,
  tileWithin,
} from '../../tlog/tiles.js';
import { sha256Bytes } from '../composition/audit-keys.js';
import { AuditProofError, newestNoted, openCheckpoint, proveConsistency, storedRoot } from './proving.js';

/**
 * The audit trail's archive (decisions §15): the older records as a C2SP `tlog-tiles`
 * directory, files written once and never changed (a later archive adds files beside them;
 * only `checkpoint`, the signed note of what the directory holds, is replaced), and its check
 * (`audit verify --archive`), which names the file that was changed, removed or added.
 */

export const CHECKPOINT_FILE = 'checkpoint';

/** An archive that cannot be written or read as asked; the message names the file or the record. */
export class AuditArchiveError extends Error {
  override readonly name = 'AuditArchiveError';
}

/** Writes `bytes` to a new file and forces them to the disk before it returns. */
function writeDurably(file: string, bytes: Uint8Array, flag: 'wx' | 'w'): void {
  const fd = openSync(file, flag, 0o600);
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Forces a directory's entries (the names of the files written in it) to the disk. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `bytes` at `path`, durably, unless a file is there; one that is must hold the same
 * bytes. The directories written in are noted in `touched`, to be synced once at the end.
 */
function writeOnce(dir: string, path: string, bytes: Uint8Array, touched: Set<string>): boolean {
  const file = join(dir, path);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeDurably(file, bytes, 'wx');
    touched.add(dirname(file));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (!sameHash(new Uint8Array(readFileSync(file)), bytes)) {
      throw new AuditArchiveError(
        `${path} is already in ${dir} with other content: an archive file is never rewritten`,
      );
    }
    return false;
  }
}

/** Opens a checkpoint; one no key given signed may be from before a rotation of the key: says what to give. */
function afterRotation<T>(open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (
      error instanceof AuditProofError &&
      /no signature on the note is by a key given/.test(error.message)
    ) {
      throw new AuditProofError(
        `${error.message} (signed before AUDIT_SIGNING_KEY was rotated? give that key's public half with --public-key)`,
      );
    }
    throw error;
  }
}

/** A checkpoint written by a run that stopped before renaming it: never signed into the archive. */
function removeStaleCheckpoints(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names)
    if (name.startsWith(`.${CHECKPOINT_FILE}.`)) rmSync(join(dir, name), { force: true });
}

/**
 * Checks that `dir` holds the entry bundles of records `from` + 1 … `to` (whole tiles), before
 * the store lets go of them: a file removed from the archive since it was written is named.
 */
export function assertArchiveHolds(dir: string, from: number, to: number): void {
  const missing: string[] = [];
  for (let index = Math.floor(from / TILE_WIDTH); index < to / TILE_WIDTH; index++) {
    if (!existsSync(join(dir, bundlePath(index)))) missing.push(bundlePath(index));
  }
  if (missing.length > 0) {
    throw new AuditArchiveError(
      `${dir} lacks ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}: the store keeps those records; run case-read audit verify --archive`,
    );
  }
}

/** The size the archive's checkpoint signs (0 when there is none yet), opened with `keys`. */
function archivedSize(dir: string, keys: readonly NoteVerifierKey[]): { size: number; root?: Hash } {
  let note: string;
  try {
    note = readFileSync(join(dir, CHECKPOINT_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { size: 0 };
    throw error;
  }
  const { body } = openCheckpoint(note, keys, `${join(dir, CHECKPOINT_FILE)}`);
  return { size: body.size, root: body.root };
}

export interface ArchiveWritten {
  readonly from: number;
  readonly to: number;
  readonly files: number;
}

/**
 * Archives the records up to `size` (a multiple of 256, covered by a signed checkpoint of the
 * tree) to `dir`: their entry bundles, the hash tiles of the tree of `size`, and its signed
 * checkpoint. Every entry is checked against the stored tree, and the stored tree against the
 * newest signed checkpoint (and the archive's own, when it holds one), before anything is
 * written: what does not match is refused, naming it.
 */
export async function writeArchive(
  log: AuditLog,
  dir: string,
  size: number,
  signer: NoteSigner,
  keys: readonly NoteVerifierKey[],
): Promise<ArchiveWritten> {
  removeStaleCheckpoints(dir);
  const held = afterRotation(() => archivedSize(dir, keys));
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
  if (held.root !== undefined && !sameHash((await storedRoot(log, held.size)).root, held.root)) {
    throw new AuditArchiveError(
      `${dir} is not an archive of this trail: the tree of its ${held.size} records is not the stored one`,
    );
  }
  if (size <= held.size) return { from: held.size, to: held.size, files: 0 };
  const newest = await newestNoted(log);
  // The newest stored checkpoint is signed by the keys given: a stored note is not taken on trust.
  afterRotation(() =>
    openCheckpoint(newest.note, keys, `the newest stored checkpoint (${newest.body.size} records)`),
  );
  if (newest.body.size < size) {
    throw new AuditArchiveError(
      `the newest checkpoint covers ${newest.body.size} records, not ${size}: records are archived once a checkpoint covers them`,
    );
  }
  const { root } = await storedRoot(log, size);
  const proof = await proveConsistency(log, size, newest.body.size);
  if (!verifyConsistency(sha256Bytes, size, newest.body.size, root, newest.body.root, proof)) {
    throw new AuditArchiveError(
      'the stored tree is not the one the newest checkpoint signed; run case-read audit verify',
    );
  }
  if (held.root !== undefined) {
    const extends_ = await proveConsistency(log, held.size, size);
    if (!verifyConsistency(sha256Bytes, held.size, size, held.root, root, extends_)) {
      throw new AuditArchiveError(
        `the trail does not extend the archive in ${dir}: it was rewritten, or the archive is another log's`,
      );
    }
  }
  let files = 0;
  const touched = new Set<string>();
  let bundle: Uint8Array[] = [];
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
      if (bundle.length < TILE_WIDTH) continue;
      // The entries' leaf hashes are the level-0 tile's: a record changed since the tree grew is refused.
      const indexes = tileHashIndexes({ level: 0, index, width: TILE_WIDTH });
      const stored = await log.treeHashes(indexes);
      bundle.forEach((entry, i) => {
        const leaf = stored.get(indexes[i] as number) as Hash;
        if (!sameHash(leafHash(sha256Bytes, entry), leaf)) {
          throw new AuditArchiveError(
            `record ${index * TILE_WIDTH + i + 1} is not the leaf the tree holds: it was changed; run case-read audit verify`,
          );
        }
      });
      if (writeOnce(dir, bundlePath(index), bundleOf(bundle), touched)) files++;
      bundle = [];
      index++;
    }
  }
  if (index * TILE_WIDTH !== size)
    throw new AuditArchiveError(`the store holds records only up to ${index * TILE_WIDTH}`);
  for (const tile of tilesOf(size, held.size)) {
    const indexes = tileHashIndexes(tile);
    const stored = await log.treeHashes(indexes);
    const hashes = Buffer.concat(indexes.map((i) => stored.get(i) as Hash));
    if (writeOnce(dir, tilePath(tile), hashes, touched)) files++;
  }
  for (const written of touched) syncDirectory(written);
  // The checkpoint last, and whole: a reader never sees one that signs what is not written;
  // and once it is on the disk, everything it signs is (the store may then let go of them).
  const note = signNote(checkpointText(signer.name, size, root), signer);
  const temporary = join(dir, `.${CHECKPOINT_FILE}.${process.pid}`);
  writeDurably(temporary, new TextEncoder().encode(note), 'w');
  renameSync(temporary, join(dir, CHECKPOINT_FILE));
  syncDirectory(dir);
  return { from: held.size, to: size, files: files + 1 };
}

/** What `audit verify --archive` found: the records checked, or what is wrong, naming the file. */
export type ArchiveVerification =
  | { readonly ok: true; readonly records: number; readonly files: number }
  | { readonly ok: false; readonly reason: string; readonly files: readonly string[] };

/** Every file below `dir`, as paths relative to it. */
function filesBelow(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(relative(dir, path).split('\\').join('/'));
    }
  };
  walk(dir);
  return found;
}

/**
 * Checks an archive on its own: its checkpoint is signed by `keys`; every file the tree of
 * that size needs is there and no other (an earlier archive's partial tiles excepted); every
 * hash tile holds what the entries make; and the entries make the signed root. A changed,
 * removed or added file is named.
 */
export function verifyArchive(dir: string, keys: readonly NoteVerifierKey[]): ArchiveVerification {
  let size: number;
  let root: Hash;
  try {
    const held = archivedSize(dir, keys);
    if (held.root === undefined)
      return { ok: false, reason: `${dir} holds no ${CHECKPOINT_FILE}`, files: [CHECKPOINT_FILE] };
    size = held.size;
    root = held.root;
  } catch (error) {
    if (error instanceof AuditProofError)
      return { ok: false, reason: error.message, files: [CHECKPOINT_FILE] };
    throw error;
  }
  if (size % TILE_WIDTH !== 0) {
    return {
      ok: false,
      reason: `its checkpoint signs ${size} records, not whole tiles`,
      files: [CHECKPOINT_FILE],
    };
  }
  const bundles = size / TILE_WIDTH;
  const expected = new Set([
    ...Array.from({ length: bundles }, (_, i) => bundlePath(i)),
    ...tilesOf(size).map(tilePath),
  ]);
  const present = filesBelow(dir).filter((f) => f !== CHECKPOINT_FILE);
  const earlierPartials: Tile[] = [];
  const added: string[] = [];
  for (const file of present) {
    if (expected.has(file)) continue;
    const tile = tileOfPath(file);
    if (tile !== undefined && tile.width < TILE_WIDTH && tileWithin(tile, size)) earlierPartials.push(tile);
    else added.push(file);
  }
  const missing = [...expected].filter((f) => !present.includes(f));
  if (missing.length > 0) return { ok: false, reason: `missing: ${missing.join(', ')}`, files: missing };
  if (added.length > 0)
    return { ok: false, reason: `not part of the archive (added): ${added.join(', ')}`, files: added };

  // The tiles the entries make, level by level, compared with the files as each is complete.
  const wrongTiles: string[] = [];
  const wrongBundles: string[] = [];
  const frontier = new Frontier(sha256Bytes);
  const pending: Hash[][] = [];
  const read = (path: string) => new Uint8Array(readFileSync(join(dir, path)));
  const check = (tile: Tile, hashes: readonly Hash[]) => {
    const file = read(tilePath(tile));
    if (!sameHash(file, Buffer.concat(hashes.slice(0, tile.width)))) wrongTiles.push(tilePath(tile));
  };
  const counts: number[] = [];
  const add = (level: number, hash: Hash): void => {
    counts[level] = (counts[level] ?? 0) + 1;
    const row = pending[level] ?? [];
    pending[level] = row;
    row.push(hash);
    if (row.length < TILE_WIDTH) return;
    const index = (counts[level] as number) / TILE_WIDTH - 1;
    check({ level, index, width: TILE_WIDTH }, row);
    for (const partial of earlierPartials.filter((t) => t.level === level && t.index === index))
      check(partial, row);
    pending[level] = [];
    add(level + 1, tileRoot(sha256Bytes, row));
  };
  for (let index = 0; index < bundles; index++) {
    const path = bundlePath(index);
    const entries = entriesOf(read(path));
    if (entries === undefined || entries.length !== TILE_WIDTH) {
      return {
        ok: false,
        reason: `${path} does not hold ${TILE_WIDTH} whole entries: it was changed`,
        files: [path],
      };
    }
    const leaves = entries.map((entry) => leafHash(sha256Bytes, entry));
    const tileFile = read(tilePath({ level: 0, index, width: TILE_WIDTH }));
    if (!sameHash(tileFile, Buffer.concat(leaves))) wrongBundles.push(path);
    for (const leaf of leaves) {
      frontier.push(leaf);
      add(0, leaf);
    }
  }
  // The right edge: each level's partial tile, and any earlier, narrower one of the same index.
  for (let level = 1; level < pending.length; level++) {
    const row = pending[level] ?? [];
    if (row.length === 0) continue;
    const index = Math.floor((counts[level] ?? 0) / TILE_WIDTH);
    check({ level, index, width: row.length }, row);
    for (const partial of earlierPartials.filter((t) => t.level === level && t.index === index))
      check(partial, row);
  }
  const rootMatches = sameHash(frontier.root(), root);
  if (!rootMatches) {
    const named = wrongBundles.length > 0 ? wrongBundles : [CHECKPOINT_FILE];
    return {
      ok: false,
      reason: `the entries do not make the root the checkpoint signs: ${named.join(', ')} changed`,
      files: named,
    };
  }
  const tiles = [...new Set(wrongTiles)];
  if (tiles.length > 0) {
    return {
      ok: false,
      reason: `hash tiles that do not hold what the entries make: ${tiles.join(', ')} changed`,
      files: tiles,
    };
  }
  return { ok: true, records: size, files: present.length + 1 };
}
