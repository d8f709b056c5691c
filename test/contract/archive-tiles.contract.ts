import { describe, expect, it } from 'vitest';
import type { ArchiveTiles } from '../../src/ports/archive-tiles.js';
import { CHECKPOINT_PATH } from '../../src/tlog/tiles.js';

/**
 * The contract of the archive's files (src/ports/archive-tiles.ts), run by every adapter: a
 * file is written once and never replaced by other bytes, the checkpoint is replaced whole,
 * what is there is read back and listed, one file at a time. `make` gives a new, empty archive;
 * `again` another handle on the same one (a later run, in another process).
 */
export function describeArchiveTilesContract(
  name: string,
  make: () => Promise<ArchiveTiles> | ArchiveTiles,
  again: (tiles: ArchiveTiles) => ArchiveTiles,
): void {
  const bytes = (text: string) => new TextEncoder().encode(text);
  const text = (read: Uint8Array | undefined) =>
    read === undefined ? undefined : new TextDecoder().decode(read);
  const listed = async (tiles: ArchiveTiles) => {
    const paths: string[] = [];
    for await (const path of tiles.paths()) paths.push(path);
    return paths.sort();
  };

  describe(`ArchiveTiles contract: ${name}`, () => {
    it('holds nothing at first, and opening a writer creates nothing', async () => {
      const tiles = await make();
      expect(await tiles.read(CHECKPOINT_PATH)).toBeUndefined();
      expect(await tiles.has('tile/entries/000')).toBe(false);
      const writer = await tiles.openWriter();
      await writer.close();
      expect(await listed(tiles)).toEqual([]);
      expect(await tiles.has('tile')).toBe(false);
    });

    it('puts a file once: the same bytes again are present, other bytes are refused and stay', async () => {
      const tiles = await make();
      const writer = await tiles.openWriter();
      try {
        expect(await writer.putOnce('tile/0/000', bytes('first'))).toBe('written');
        expect(await writer.putOnce('tile/0/000', bytes('first'))).toBe('present');
        expect(await writer.putOnce('tile/0/000', bytes('other'))).toBe('different');
        expect(await writer.putOnce('tile/0/000', bytes('firs'))).toBe('different');
      } finally {
        await writer.close();
      }
      expect(text(await tiles.read('tile/0/000'))).toBe('first');
      expect(await listed(tiles)).toEqual(['tile/0/000']);
    });

    it('creates what holds a file: paths of any depth, read back as put, listed each once', async () => {
      const tiles = await make();
      const writer = await tiles.openWriter();
      const files = {
        'tile/entries/x001/x234/067': 'a bundle',
        'tile/entries/000': 'another',
        'tile/1/000.p/3': 'a partial tile',
        'tile/0/000': '',
      };
      for (const [path, content] of Object.entries(files))
        expect(await writer.putOnce(path, bytes(content))).toBe('written');
      await writer.close();
      expect(await listed(tiles)).toEqual(Object.keys(files).sort());
      for (const [path, content] of Object.entries(files)) {
        expect(text(await tiles.read(path))).toBe(content);
        expect(await tiles.has(path)).toBe(true);
      }
      expect(await tiles.has('tile/entries')).toBe(true);
      expect(await tiles.read('tile/entries/001')).toBeUndefined();
      expect(await tiles.has('tile/entries/001')).toBe(false);
    });

    it('replaces the checkpoint whole, the one file that is replaced; the files before it stay', async () => {
      const tiles = await make();
      const first = await tiles.openWriter();
      await first.putOnce('tile/entries/000', bytes('bundle 0'));
      await first.replaceCheckpoint(bytes('origin\n256\nroot0\n\n— signature\n'));
      await first.close();
      expect(text(await tiles.read(CHECKPOINT_PATH))).toBe('origin\n256\nroot0\n\n— signature\n');
      const second = await tiles.openWriter();
      await second.putOnce('tile/entries/001', bytes('bundle 1'));
      await second.replaceCheckpoint(bytes('origin\n512\nroot1\n\n— signature\n'));
      await second.close();
      expect(text(await tiles.read(CHECKPOINT_PATH))).toBe('origin\n512\nroot1\n\n— signature\n');
      expect(await listed(tiles)).toEqual([CHECKPOINT_PATH, 'tile/entries/000', 'tile/entries/001']);
    });

    it('keeps what was put, not the caller’s array: changing it afterwards changes nothing', async () => {
      const tiles = await make();
      const writer = await tiles.openWriter();
      const put = bytes('kept');
      await writer.putOnce('tile/0/000', put);
      put[0] = 0x21;
      await writer.close();
      expect(text(await tiles.read('tile/0/000'))).toBe('kept');
      const read = (await tiles.read('tile/0/000')) as Uint8Array;
      read[0] = 0x21;
      expect(text(await tiles.read('tile/0/000'))).toBe('kept');
    });

    it('files put without a checkpoint after them stay, unsigned, for the next run', async () => {
      const tiles = await make();
      const stopped = await tiles.openWriter();
      await stopped.putOnce('tile/entries/000', bytes('bundle 0'));
      await stopped.close();
      const later = again(tiles);
      expect(await later.read(CHECKPOINT_PATH)).toBeUndefined();
      const next = await later.openWriter();
      expect(await next.putOnce('tile/entries/000', bytes('bundle 0'))).toBe('present');
      await next.replaceCheckpoint(bytes('origin\n256\nroot\n\n— signature\n'));
      await next.close();
      expect(await listed(again(later))).toEqual([CHECKPOINT_PATH, 'tile/entries/000']);
    });

    it('lists one path at a time: a walk may stop part way', async () => {
      const tiles = await make();
      const writer = await tiles.openWriter();
      for (let i = 0; i < 5; i++) await writer.putOnce(`tile/entries/00${i}`, bytes(`bundle ${i}`));
      await writer.close();
      const walk = tiles.paths();
      expect(typeof walk[Symbol.asyncIterator]).toBe('function');
      let seen = 0;
      for await (const _ of walk) if (++seen === 2) break;
      expect(seen).toBe(2);
      expect(await listed(tiles)).toHaveLength(5);
    });

    it('names where it is, and where each file is, for messages', async () => {
      const tiles = await make();
      expect(tiles.location.length).toBeGreaterThan(0);
      expect(tiles.locationOf(CHECKPOINT_PATH).startsWith(tiles.location)).toBe(true);
      expect(tiles.locationOf(CHECKPOINT_PATH).endsWith(`/${CHECKPOINT_PATH}`)).toBe(true);
    });
  });
}
