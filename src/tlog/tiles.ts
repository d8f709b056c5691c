/**
 * The C2SP `tlog-tiles` layout of the audit tree (decisions §15): the tree's hashes in tiles
 * of 256 and the entries in bundles of 256, at fixed paths, so that an archive of the trail is
 * a directory of files, written once, that any tlog-tiles client reads.
 *
 * A tile at level L, index N holds the hashes of the tree's subtrees of 2^(8·L) leaves from
 * the (256·N)-th on: 256 of them when full (`tile/L/N`), W of them (1 to 255) when partial
 * (`tile/L/N.p/W`). An entry bundle `tile/entries/N` holds entries 256·N … 256·N + 255, each a
 * big-endian uint16 length and its bytes. N is written in groups of three digits, every group
 * but the last behind an `x`: 1234067 is `x001/x234/067`.
 */
import { type Hash, nodeHash, type Sha256, storedIndexOf } from './merkle.js';

/** Hashes (or entries) a full tile holds, and the levels of the tree one tile level spans. */
export const TILE_WIDTH = 256;
export const TILE_HEIGHT = 8;

/** A hash tile: its level, its index, and its width (256 when full). */
export interface Tile {
  readonly level: number;
  readonly index: number;
  readonly width: number;
}

/** N as a tile path's index: groups of three digits, all but the last behind an `x`. */
export function tileIndexPath(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`${index} is not a tile index`);
  const digits = String(index);
  const padded = digits.padStart(Math.ceil(digits.length / 3) * 3, '0');
  const groups = padded.match(/.{3}/g) as string[];
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** The path of a hash tile below the archive's directory. */
export const tilePath = (tile: Tile): string =>
  `tile/${tile.level}/${tileIndexPath(tile.index)}${tile.width === TILE_WIDTH ? '' : `.p/${tile.width}`}`;

/** The path of the checkpoint below the archive's directory: the signed note of what it holds, the one file replaced. */
export const CHECKPOINT_PATH = 'checkpoint';

/** The path of entry bundle N below the archive's directory. */
export const bundlePath = (index: number): string => `tile/entries/${tileIndexPath(index)}`;

/** How many hashes a tree of `size` leaves has at tile level `level` (subtrees of 256^level leaves). */
export const hashesAtLevel = (size: number, level: number): number => Math.floor(size / TILE_WIDTH ** level);

/**
 * The hash tiles a tree of `size` leaves is read from, lowest level first, that a tree of
 * `fromSize` did not already have (its files stay: a later archive adds files beside them):
 * for each level, its full tiles, and the partial one at its right edge if any. One at a time,
 * in bounded memory, however large the tree.
 */
export function* eachTileOf(size: number, fromSize = 0): Generator<Tile> {
  for (let level = 0; hashesAtLevel(size, level) > 0; level++) {
    const hashes = hashesAtLevel(size, level);
    const before = hashesAtLevel(fromSize, level);
    if (hashes === before) continue;
    for (let index = Math.floor(before / TILE_WIDTH); index < Math.floor(hashes / TILE_WIDTH); index++) {
      yield { level, index, width: TILE_WIDTH };
    }
    if (hashes % TILE_WIDTH > 0) {
      yield { level, index: Math.floor(hashes / TILE_WIDTH), width: hashes % TILE_WIDTH };
    }
  }
}

/** {@link eachTileOf}, as a list. */
export const tilesOf = (size: number, fromSize = 0): Tile[] => [...eachTileOf(size, fromSize)];

/** How many hash tiles a tree of `size` leaves is read from (the length of {@link eachTileOf}`(size)`). */
export function tileCount(size: number): number {
  let count = 0;
  for (let level = 0; hashesAtLevel(size, level) > 0; level++)
    count += Math.ceil(hashesAtLevel(size, level) / TILE_WIDTH);
  return count;
}

/** Whether `tile` is one of the tiles of the tree of `size` leaves, its width the tree's there. */
export function isTileOf(tile: Tile, size: number): boolean {
  const hashes = hashesAtLevel(size, tile.level);
  const full = Math.floor(hashes / TILE_WIDTH);
  if (tile.index < full) return tile.width === TILE_WIDTH;
  return tile.index === full && hashes % TILE_WIDTH > 0 && tile.width === hashes % TILE_WIDTH;
}

/**
 * Whether `tile` belongs to the tiles of a tree of `size` or of a smaller one: full within
 * the level's hashes, or partial no wider than the level had at its index.
 */
export function tileWithin(tile: Tile, size: number): boolean {
  const hashes = hashesAtLevel(size, tile.level);
  if (tile.width < 1 || tile.width > TILE_WIDTH) return false;
  return tile.index * TILE_WIDTH + tile.width <= hashes;
}

/** The stored indexes (Go tlog's order) of a tile's hashes: the tree's hashes at level 8·L, from 256·N on. */
export const tileHashIndexes = (tile: Tile): number[] =>
  Array.from({ length: tile.width }, (_, i) =>
    storedIndexOf({ level: TILE_HEIGHT * tile.level, index: tile.index * TILE_WIDTH + i }),
  );

/** The hash of a full tile's 256 hashes as one subtree: its hash one tile level up. */
export function tileRoot(sha256: Sha256, hashes: readonly Hash[]): Hash {
  let row = hashes.slice();
  while (row.length > 1) {
    const next: Hash[] = [];
    for (let i = 0; i < row.length; i += 2) next.push(nodeHash(sha256, row[i] as Hash, row[i + 1] as Hash));
    row = next;
  }
  return row[0] as Hash;
}

/** An entry bundle's bytes: each entry as a big-endian uint16 length and its bytes. */
export function bundleOf(entries: readonly Uint8Array[]): Uint8Array {
  const length = entries.reduce((n, e) => n + 2 + e.length, 0);
  const out = new Uint8Array(length);
  let at = 0;
  for (const entry of entries) {
    if (entry.length > 0xffff)
      throw new RangeError(`an entry of ${entry.length} bytes does not fit a bundle`);
    out[at] = entry.length >> 8;
    out[at + 1] = entry.length & 0xff;
    out.set(entry, at + 2);
    at += 2 + entry.length;
  }
  return out;
}

/** A bundle's entries read back, or undefined when its bytes are not whole entries. */
export function entriesOf(bundle: Uint8Array): Uint8Array[] | undefined {
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    if (at + 2 > bundle.length) return undefined;
    const length = ((bundle[at] as number) << 8) | (bundle[at + 1] as number);
    if (at + 2 + length > bundle.length) return undefined;
    entries.push(bundle.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}

/** A path below an archive read back as the index of an entry bundle, or undefined when it is not one. */
export function bundleIndexOfPath(path: string): number | undefined {
  const match = /^tile\/entries\/((?:x\d{3}\/)*\d{3})$/.exec(path);
  if (!match) return undefined;
  const index = Number((match[1] as string).replaceAll('x', '').replaceAll('/', ''));
  return bundlePath(index) === path ? index : undefined;
}

/** A path below an archive read back as a hash tile, or undefined when it is not one. */
export function tileOfPath(path: string): Tile | undefined {
  const match = /^tile\/(\d+)\/((?:x\d{3}\/)*\d{3})(?:\.p\/(\d+))?$/.exec(path);
  if (!match) return undefined;
  const index = Number((match[2] as string).replaceAll('x', '').replaceAll('/', ''));
  const width = match[3] === undefined ? TILE_WIDTH : Number(match[3]);
  const tile = { level: Number(match[1]), index, width };
  return tilePath(tile) === path && width >= 1 && width <= TILE_WIDTH ? tile : undefined;
}
