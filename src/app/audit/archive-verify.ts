import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import { Frontier, type Hash, leafHash, sameHash } from '../../tlog/merkle.js';
import type { NoteVerifier } from '../../tlog/note.js';
import {
  bundleIndexOfPath,
  bundlePath,
  eachTileOf,
  entriesOf,
  isTileOf,
  TILE_WIDTH,
  type Tile,
  tileCount,
  tileOfPath,
  tilePath,
  tileRoot,
  tileWithin,
} from '../../tlog/tiles.js';
import { AuditArchiveError, archivedSize, CHECKPOINT_FILE } from './archive.js';
import { keptSizeOf } from './archive-witnessed.js';
import { keptWitnessedProblem } from './archive-witnessing.js';
import { CrnIndexCheck, MISSING_INDEX } from './crn-index-verify.js';
import { AuditProofError, type SignedTree } from './proving.js';

/**
 * `audit verify --archive` (decisions §15): an archive checked on its own, naming the file
 * that was changed, removed or added. Against a witness policy: archive-witnessing.ts.
 */

/** What `audit verify --archive` found: the records checked, or what is wrong, naming the file. */
export type ArchiveVerification =
  | { readonly ok: true; readonly records: number; readonly files: number }
  | { readonly ok: false; readonly reason: string; readonly files: readonly string[] };

/**
 * Checks an archive on its own: its checkpoint is signed by `keys`; every file the tree of
 * that size needs is there and no other (an earlier archive's partial tiles, and its crn index
 * files of its smaller size, excepted); every hash tile holds what the entries make; the
 * entries make the signed root; the crn index (crn-index-verify.ts) is what the entries make,
 * its note signed by `keys`; and each witnessed checkpoint it keeps (archive-witnessed.ts) is
 * shown by its proof to extend the archive's tree (archive-witnessing.ts). A changed, removed
 * or added file is named. `crnGroupSize`: the records a group of the index covers (65536;
 * tests make it small).
 */
export async function verifyArchive(
  hashes: AuditHashes,
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
  { crnGroupSize }: { readonly crnGroupSize?: number | undefined } = {},
): Promise<ArchiveVerification> {
  let size: number;
  let root: Hash;
  let origin: string;
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
    origin = held.origin ?? '';
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
  // The files present, walked one at a time and judged each by its name alone: the archive's
  // own are counted, an earlier archive's narrower partial tiles kept aside (a few a run), any
  // other is added. Memory stays bounded whatever the number of files.
  const bundles = size / TILE_WIDTH;
  const index = new CrnIndexCheck(hashes, tiles, keys, { origin, size, root }, crnGroupSize);
  const expected = bundles + tileCount(size) + index.expectedCount;
  let present = 0;
  let seen = 0;
  const earlierPartials = new Map<string, Tile[]>();
  const added = new Named();
  /** The sizes of the archive's checkpoints (this one's, earlier ones') whose witnessed checkpoints it keeps: one file each. */
  const kept: number[] = [];
  for await (const file of tiles.paths()) {
    if (file === CHECKPOINT_FILE) continue;
    present++;
    const indexFile = index.judge(file);
    if (indexFile !== undefined) {
      if (indexFile === 'current') seen++;
      else if (indexFile === 'added') added.add(file);
      continue;
    }
    const keptWith = keptSizeOf(file, size);
    if (keptWith !== undefined) {
      if (keptWith === 'added') added.add(file);
      else kept.push(keptWith);
      continue;
    }
    const bundle = bundleIndexOfPath(file);
    const tile = bundle === undefined ? tileOfPath(file) : undefined;
    if ((bundle !== undefined && bundle < bundles) || (tile !== undefined && isTileOf(tile, size))) {
      seen++;
    } else if (tile !== undefined && tile.level > 0 && tile.width < TILE_WIDTH && tileWithin(tile, size)) {
      // (An archive holds whole tiles of entries: a partial tile of leaves is no archive's.)
      const at = `${tile.level}/${tile.index}`;
      earlierPartials.set(at, [...(earlierPartials.get(at) ?? []), tile]);
    } else {
      added.add(file);
    }
  }
  if (seen < expected) {
    // Which: each expected file asked for in turn, until enough are named.
    const missing = new Named();
    for (const paths of [expectedPaths(size), index.expectedPaths()]) {
      for (const path of paths) {
        if (!(await tiles.has(path))) missing.add(path);
        if (missing.full) break;
      }
    }
    missing.more = expected - seen - missing.names.length;
    const ofIndex = missing.names.some((name) => index.judge(name) !== undefined);
    return {
      ok: false,
      reason: `missing: ${missing}${ofIndex ? ` (${MISSING_INDEX})` : ''}`,
      files: missing.names,
    };
  }
  if (added.count > 0)
    return { ok: false, reason: `not part of the archive (added): ${added}`, files: added.names };
  const verified = await verifyTiles(hashes, tiles, { size, root }, earlierPartials, present + 1, index);
  if (!verified.ok || kept.length === 0) return verified;
  const wrong = await keptWitnessedProblem(hashes, tiles, keys, { origin, size, root }, kept);
  return wrong === undefined ? verified : { ok: false, ...wrong };
}

/** The archive's files for a tree of `size` leaves, in order: its entry bundles, then its hash tiles. */
function* expectedPaths(size: number): Generator<string> {
  for (let index = 0; index < size / TILE_WIDTH; index++) yield bundlePath(index);
  for (const tile of eachTileOf(size)) yield tilePath(tile);
}

/** Files named in a message: the first {@link Named.LIMIT}, and how many more. */
class Named {
  static readonly LIMIT = 100;
  readonly names: string[] = [];
  count = 0;
  more = 0;
  add(name: string): void {
    this.count++;
    if (this.names.length < Named.LIMIT) this.names.push(name);
    else this.more++;
  }
  get full(): boolean {
    return this.names.length >= Named.LIMIT;
  }
  toString(): string {
    return `${this.names.join(', ')}${this.more > 0 ? ` and ${this.more} more` : ''}`;
  }
}

/** The walk of `audit verify --archive` once every file is there: the entries against the tiles and the signed root. */
async function verifyTiles(
  hashes: AuditHashes,
  archive: ArchiveTiles,
  { size, root }: SignedTree,
  earlierPartials: ReadonlyMap<string, readonly Tile[]>,
  fileCount: number,
  crnIndex: CrnIndexCheck,
): Promise<ArchiveVerification> {
  const bundles = size / TILE_WIDTH;
  const sha256 = hashes.sha256;
  // The tiles the entries make, level by level, compared with the files as each is complete.
  // Each bundle's 256 leaves are one whole subtree (the archive holds whole tiles): the tree
  // above them is grown from the subtrees' hashes, as a tree of size / 256 "leaves" whose root
  // is the tree's (RFC 9162 splits a tree of 256·m leaves where it splits one of m).
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
    for (const partial of earlierPartials.get(`${level}/${index}`) ?? []) await check(partial, row);
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
    const tile = tilePath({ level: 0, index, width: TILE_WIDTH });
    if (!sameHash(await read(tile), Buffer.concat(leaves))) {
      // The bundle or the tile: which, the signed root tells below.
      wrongBundles.push(path);
      wrongTiles.push(tile);
    }
    const subtree = tileRoot(sha256, leaves);
    frontier.push(subtree);
    await add(1, subtree);
    await crnIndex.bundle(index, entries, () => frontier.root());
  }
  // The right edge: each level's partial tile, and any earlier, narrower one of the same index.
  for (let level = 1; level < pending.length; level++) {
    const row = pending[level] ?? [];
    if (row.length === 0) continue;
    const index = Math.floor((counts[level] ?? 0) / TILE_WIDTH);
    await check({ level, index, width: row.length }, row);
    for (const partial of earlierPartials.get(`${level}/${index}`) ?? []) await check(partial, row);
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
  const wrongIndex = await crnIndex.finish();
  if (wrongIndex !== undefined) return { ok: false, ...wrongIndex };
  return { ok: true, records: size, files: fileCount };
}
