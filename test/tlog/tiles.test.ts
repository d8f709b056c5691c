import { describe, expect, it } from 'vitest';
import {
  bundleIndexOfPath,
  bundlePath,
  eachTileOf,
  isTileOf,
  TILE_WIDTH,
  tileCount,
  tileOfPath,
  tilePath,
  tilesOf,
} from '../../src/tlog/tiles.js';

/**
 * What `audit verify --archive` judges each listed file by, alone and in bounded memory
 * (decisions §18): the tiles of a tree counted and recognised by arithmetic, never listed.
 */

const sizes = [256, 512, 768, 256 * 255, 256 * 256, 256 * 257, 256 * 65_537];

describe('the tiles of a tree, without listing them', () => {
  it('counts them as eachTileOf walks them, and recognises exactly those', () => {
    for (const size of sizes) {
      const tiles = tilesOf(size);
      expect(tileCount(size), String(size)).toBe(tiles.length);
      expect([...eachTileOf(size, 768)]).toEqual(tilesOf(size, 768));
      const at = new Set(tiles.map((t) => `${t.level}/${t.index}`));
      for (const tile of tiles) {
        expect(isTileOf(tile, size), tilePath(tile)).toBe(true);
        // Another width where one is, and an index past the level's last, are not the tree's.
        expect(isTileOf({ ...tile, width: tile.width === TILE_WIDTH ? 3 : tile.width + 1 }, size)).toBe(
          false,
        );
        if (!at.has(`${tile.level}/${tile.index + 1}`))
          expect(isTileOf({ ...tile, index: tile.index + 1 }, size)).toBe(false);
      }
    }
    expect(isTileOf({ level: 4, index: 0, width: 1 }, 256 * 256)).toBe(false);
  });

  it('reads a bundle’s index back from its path, and nothing else as one', () => {
    for (const index of [0, 7, 999, 1000, 1_234_067])
      expect(bundleIndexOfPath(bundlePath(index))).toBe(index);
    for (const path of [
      'tile/entries/7',
      'tile/entries/x000/007',
      'tile/entries/000.p/3',
      'tile/0/000',
      'tile/entries/0001',
    ])
      expect(bundleIndexOfPath(path), path).toBeUndefined();
    expect(tileOfPath('tile/entries/000')).toBeUndefined();
  });
});
