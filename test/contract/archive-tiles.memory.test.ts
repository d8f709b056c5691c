import { describeArchiveTilesContract } from './archive-tiles.contract.js';
import { MemoryArchiveTiles } from './memory-archive-tiles.js';

describeArchiveTilesContract(
  'memory',
  () => new MemoryArchiveTiles(),
  (tiles) => tiles,
);
