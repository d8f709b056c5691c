import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import { Frontier, type Hash, leafHash, sameHash } from '../../tlog/merkle.js';
import type { NoteVerifier } from '../../tlog/note.js';
import {
  bundlePath,
  entriesOf,
  TILE_WIDTH,
  type Tile,
  tileOfPath,
  tilePath,
  tileRoot,
  tilesOf,
  tileWithin,
} from '../../tlog/tiles.js';
import { AuditArchiveError, archivedSize, CHECKPOINT_FILE } from './archive.js';
import { AuditProofError, type SignedTree } from './proving.js';

/**
 * `audit verify --archive` (decisions §15): an archive checked on its own, naming the file
 * that was changed, removed or added.
 */

/** What `audit verify --archive` found: the records checked, or what is wrong, naming the file. */
export type ArchiveVerification =
  | { readonly ok: true; readonly records: number; readonly files: number }
  | { readonly ok: false; readonly reason: string; readonly files: readonly string[] };

/**
 * Checks an archive on its own: its checkpoint is signed by `keys`; every file the tree of
 * that size needs is there and no other (an earlier archive's partial tiles excepted); every
 * hash tile holds what the entries make; and the entries make the signed root. A changed,
 * removed or added file is named.
 */
export async function verifyArchive(
  hashes: AuditHashes,
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
): Promise<ArchiveVerification> {
  let size: number;
  let root: Hash;
  try {
    const held = await archivedSize(tiles, keys);
    if (held.root === undefined)
      return {
        ok: false,
        reason: `${tiles.location} holds no ${CHECKPOINT_FILE}`,
        files: [CHECKPOINT_FILE],
      };
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
  // The files present, walked one at a time: those expected are crossed off as they are seen.
  const missing = new Set(expected);
  let present = 0;
  const earlierPartials: Tile[] = [];
  const added: string[] = [];
  for await (const file of tiles.paths()) {
    if (file === CHECKPOINT_FILE) continue;
    present++;
    if (expected.has(file)) {
      missing.delete(file);
      continue;
    }
    const tile = tileOfPath(file);
    if (tile !== undefined && tile.width < TILE_WIDTH && tileWithin(tile, size)) earlierPartials.push(tile);
    else added.push(file);
  }
  if (missing.size > 0)
    return { ok: false, reason: `missing: ${[...missing].join(', ')}`, files: [...missing] };
  if (added.length > 0)
    return { ok: false, reason: `not part of the archive (added): ${added.join(', ')}`, files: added };
  return verifyTiles(hashes, tiles, { size, root }, earlierPartials, present + 1);
}

/** The walk of `audit verify --archive` once every file is there: the entries against the tiles and the signed root. */
async function verifyTiles(
  hashes: AuditHashes,
  archive: ArchiveTiles,
  { size, root }: SignedTree,
  earlierPartials: readonly Tile[],
  fileCount: number,
): Promise<ArchiveVerification> {
  const bundles = size / TILE_WIDTH;
  const sha256 = hashes.sha256;
  // The tiles the entries make, level by level, compared with the files as each is complete.
  const wrongTiles: string[] = [];
  const wrongBundles: string[] = [];
  const frontier = new Frontier(sha256);
  const pending: Hash[][] = [];
  const read = async (path: string): Promise<Uint8Array> => {
    const bytes = await archive.read(path);
    // Listed a moment ago: one removed since is named as one missing.
    if (bytes === undefined) throw new AuditArchiveError(`${path} is missing from ${archive.location}`);
    return bytes;
  };
  const check = async (tile: Tile, row: readonly Hash[]) => {
    const file = await read(tilePath(tile));
    if (!sameHash(file, Buffer.concat(row.slice(0, tile.width)))) wrongTiles.push(tilePath(tile));
  };
  const counts: number[] = [];
  const add = async (level: number, hash: Hash): Promise<void> => {
    counts[level] = (counts[level] ?? 0) + 1;
    const row = pending[level] ?? [];
    pending[level] = row;
    row.push(hash);
    if (row.length < TILE_WIDTH) return;
    const index = (counts[level] as number) / TILE_WIDTH - 1;
    await check({ level, index, width: TILE_WIDTH }, row);
    for (const partial of earlierPartials.filter((t) => t.level === level && t.index === index))
      await check(partial, row);
    pending[level] = [];
    await add(level + 1, tileRoot(sha256, row));
  };
  for (let index = 0; index < bundles; index++) {
    const path = bundlePath(index);
    const entries = entriesOf(await read(path));
    if (entries === undefined || entries.length !== TILE_WIDTH) {
      return {
        ok: false,
        reason: `${path} does not hold ${TILE_WIDTH} whole entries: it was changed`,
        files: [path],
      };
    }
    const leaves = entries.map((entry) => leafHash(sha256, entry));
    const tileFile = await read(tilePath({ level: 0, index, width: TILE_WIDTH }));
    if (!sameHash(tileFile, Buffer.concat(leaves))) wrongBundles.push(path);
    for (const leaf of leaves) {
      frontier.push(leaf);
      await add(0, leaf);
    }
  }
  // The right edge: each level's partial tile, and any earlier, narrower one of the same index.
  for (let level = 1; level < pending.length; level++) {
    const row = pending[level] ?? [];
    if (row.length === 0) continue;
    const index = Math.floor((counts[level] ?? 0) / TILE_WIDTH);
    await check({ level, index, width: row.length }, row);
    for (const partial of earlierPartials.filter((t) => t.level === level && t.index === index))
      await check(partial, row);
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
  return { ok: true, records: size, files: fileCount };
}
