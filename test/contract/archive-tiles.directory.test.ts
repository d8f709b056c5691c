import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { TileDirectory } from '../../src/adapters/tile-directory/tile-directory.js';
import { describeArchiveTilesContract } from './archive-tiles.contract.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-archive-tiles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

// A directory not yet there: the first file put creates it.
describeArchiveTilesContract(
  'directory',
  () => new TileDirectory(join(dir, `archive-${++n}`)),
  (tiles) => new TileDirectory(tiles.location),
);
