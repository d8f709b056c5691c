import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

/** Every fsync and rename the adapter makes, by path, in order. */
const calls: string[] = [];
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const opened = new Map<number, string>();
  return {
    ...real,
    openSync: (
      path: string,
      ...rest: Parameters<typeof real.openSync> extends [unknown, ...infer R] ? R : never
    ) => {
      const fd = real.openSync(path, ...rest);
      opened.set(fd, path);
      return fd;
    },
    fsyncSync: (fd: number) => {
      calls.push(`fsync ${opened.get(fd)}`);
      real.fsyncSync(fd);
    },
    renameSync: (from: string, to: string) => {
      calls.push(`rename ${from} -> ${to}`);
      real.renameSync(from, to);
    },
  };
});

const { TileDirectory } = await import('../../../src/adapters/tile-directory/tile-directory.js');

/**
 * The archive as a directory on a disk (src/adapters/tile-directory), beyond the port's
 * contract: its files readable by their owner only, each forced to the disk as it is written,
 * the directories written in synced before the checkpoint, the checkpoint written to a
 * temporary name and renamed into place, and a temporary one a stopped run left removed.
 */

const dir = fs.mkdtempSync(join(tmpdir(), 'case-read-tile-directory-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
let archive: string;
beforeEach(() => {
  archive = join(dir, `archive-${++n}`);
  calls.length = 0;
});
const bytes = (text: string) => new TextEncoder().encode(text);
const modeOf = (path: string) => fs.statSync(path).mode & 0o777;

describe('TileDirectory', () => {
  it('writes files 0600 in directories 0700, each synced; the directories, then the checkpoint, renamed', async () => {
    const tiles = new TileDirectory(archive);
    const writer = await tiles.openWriter();
    await writer.putOnce('tile/entries/000', bytes('bundle'));
    await writer.putOnce('tile/0/000', bytes('tile'));
    expect(calls).toEqual([
      `fsync ${join(archive, 'tile/entries/000')}`,
      `fsync ${join(archive, 'tile/0/000')}`,
    ]);
    calls.length = 0;
    await writer.replaceCheckpoint(bytes('note\n'));
    await writer.close();
    const temporary = join(archive, `.checkpoint.${process.pid}`);
    expect(calls).toEqual([
      `fsync ${join(archive, 'tile/entries')}`,
      `fsync ${join(archive, 'tile/0')}`,
      `fsync ${temporary}`,
      `rename ${temporary} -> ${join(archive, 'checkpoint')}`,
      `fsync ${archive}`,
    ]);
    for (const file of ['tile/entries/000', 'tile/0/000', 'checkpoint'])
      expect(modeOf(join(archive, file))).toBe(0o600);
    for (const folder of ['', 'tile', 'tile/entries', 'tile/0'])
      expect(modeOf(join(archive, folder))).toBe(0o700);
    expect(fs.readdirSync(archive).sort()).toEqual(['checkpoint', 'tile']);
  });

  it('a file already there with the same bytes is not written again, nor its directory synced', async () => {
    const tiles = new TileDirectory(archive);
    const first = await tiles.openWriter();
    await first.putOnce('tile/0/000', bytes('tile'));
    await first.close();
    calls.length = 0;
    const second = await tiles.openWriter();
    expect(await second.putOnce('tile/0/000', bytes('tile'))).toBe('present');
    await second.replaceCheckpoint(bytes('note\n'));
    expect(calls.filter((call) => call === `fsync ${join(archive, 'tile/0')}`)).toEqual([]);
  });

  it('removes the temporary checkpoint a stopped run left, and nothing else, when a writer opens', async () => {
    fs.mkdirSync(archive, { mode: 0o700 });
    fs.writeFileSync(join(archive, '.checkpoint.12345'), 'half a note');
    fs.writeFileSync(join(archive, '.other'), 'kept');
    const tiles = new TileDirectory(archive);
    const listed = async () => {
      const paths: string[] = [];
      for await (const path of tiles.paths()) paths.push(path);
      return paths;
    };
    // Listed as any file is (audit verify --archive names it as added) until a writer opens.
    expect(await listed()).toEqual(['.checkpoint.12345', '.other']);
    await (await tiles.openWriter()).close();
    expect(await listed()).toEqual(['.other']);
  });

  it('lists depth first, each directory in byte order, as audit verify --archive names files', async () => {
    const tiles = new TileDirectory(archive);
    const writer = await tiles.openWriter();
    for (const path of ['tile/entries/001', 'tile/1/000.p/3', 'tile/0/001', 'tile/0/000', 'tile/entries/000'])
      await writer.putOnce(path, bytes(path));
    await writer.replaceCheckpoint(bytes('note\n'));
    const paths: string[] = [];
    for await (const path of tiles.paths()) paths.push(path);
    expect(paths).toEqual([
      'checkpoint',
      'tile/0/000',
      'tile/0/001',
      'tile/1/000.p/3',
      'tile/entries/000',
      'tile/entries/001',
    ]);
  });

  it('a file that cannot be read fails with the file system’s code; one not there is undefined', async () => {
    fs.mkdirSync(join(archive, 'tile/0/000'), { recursive: true });
    fs.writeFileSync(join(archive, 'checkpoint'), 'note\n');
    const tiles = new TileDirectory(archive);
    await expect(tiles.read('tile/0/000')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(tiles.read('checkpoint/below')).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(await tiles.read('tile/0/001')).toBeUndefined();
    expect(tiles.locationOf('tile/0/001')).toBe(join(archive, 'tile/0/001'));
  });
});
