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
    linkSync: (from: string, to: string) => {
      calls.push(`link ${from} -> ${to}`);
      real.linkSync(from, to);
    },
  };
});

const { TileDirectory } = await import('../../../src/adapters/tile-directory/tile-directory.js');

/**
 * The archive as a directory on a disk (src/adapters/tile-directory), beyond the port's
 * contract: its files readable by their owner only, each forced to the disk as it is written,
 * each put whole (a temporary name, synced, then linked), the directories written in synced
 * before the checkpoint, the checkpoint written to a temporary name and renamed into place, and
 * the temporary files a stopped run left removed.
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
  it('reads a file into a scratch buffer, grown when too small, as read reads it; none there, undefined', async () => {
    const tiles = new TileDirectory(archive);
    const writer = await tiles.openWriter();
    const big = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256);
    await writer.putOnce('tile/entries/000', big);
    await writer.putOnce('tile/0/000', bytes('small tile'));
    const scratch = { bytes: new Uint8Array(16) };
    const first = await tiles.readInto('tile/entries/000', scratch);
    expect(first).toEqual(await tiles.read('tile/entries/000'));
    expect(scratch.bytes.length).toBeGreaterThanOrEqual(70_000);
    const kept = scratch.bytes;
    // The next read is in the same buffer: the view before shows the new bytes.
    const second = await tiles.readInto('tile/0/000', scratch);
    expect(scratch.bytes).toBe(kept);
    expect(new TextDecoder().decode(second)).toBe('small tile');
    expect(Buffer.from(first?.subarray(0, 10) ?? []).toString()).toBe('small tile');
    expect(await tiles.readInto('tile/0/999', scratch)).toBeUndefined();
    // What read hands out is a plain Uint8Array of the file's bytes, not a Buffer.
    expect((await tiles.read('tile/0/000'))?.constructor).toBe(Uint8Array);
  });

  it('puts each file whole: written to a temporary name, synced, linked; the directories, then the checkpoint, renamed', async () => {
    const tiles = new TileDirectory(archive);
    const writer = await tiles.openWriter();
    await writer.putOnce('tile/entries/000', bytes('bundle'));
    await writer.putOnce('tile/0/000', bytes('tile'));
    const run = ((calls[0] ?? '').match(/\.tmp-([0-9a-f]{16})$/) ?? [])[1] as string;
    expect(run).toMatch(/^[0-9a-f]{16}$/);
    const bundleTemporary = join(archive, `tile/entries/.000.tmp-${run}`);
    const tileTemporary = join(archive, `tile/0/.000.tmp-${run}`);
    expect(calls).toEqual([
      `fsync ${bundleTemporary}`,
      `link ${bundleTemporary} -> ${join(archive, 'tile/entries/000')}`,
      `fsync ${tileTemporary}`,
      `link ${tileTemporary} -> ${join(archive, 'tile/0/000')}`,
    ]);
    calls.length = 0;
    await writer.replaceCheckpoint(bytes('note\n'));
    await writer.close();
    const temporary = join(archive, `.checkpoint.tmp-${run}`);
    // Every directory made is a name in the one above it; each one written in holds new names.
    expect(calls.slice(0, -3).sort()).toEqual(
      [dir, archive, join(archive, 'tile'), join(archive, 'tile/entries'), join(archive, 'tile/0')]
        .map((d) => `fsync ${d}`)
        .sort(),
    );
    expect(calls.slice(-3)).toEqual([
      `fsync ${temporary}`,
      `rename ${temporary} -> ${join(archive, 'checkpoint')}`,
      `fsync ${archive}`,
    ]);
    for (const file of ['tile/entries/000', 'tile/0/000', 'checkpoint'])
      expect(modeOf(join(archive, file))).toBe(0o600);
    for (const folder of ['', 'tile', 'tile/entries', 'tile/0'])
      expect(modeOf(join(archive, folder))).toBe(0o700);
    // No temporary file is left.
    expect(fs.readdirSync(archive).sort()).toEqual(['checkpoint', 'tile']);
    expect(fs.readdirSync(join(archive, 'tile/entries'))).toEqual(['000']);
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

  it('removes the temporary files a stopped run left, and nothing else: the checkpoint’s when a writer opens, a file’s as it writes beside it', async () => {
    fs.mkdirSync(join(archive, 'tile/0'), { recursive: true, mode: 0o700 });
    fs.mkdirSync(join(archive, 'tile/1'), { recursive: true, mode: 0o700 });
    const stale = [
      '.checkpoint.12345',
      '.checkpoint.tmp-0123456789abcdef',
      'tile/0/.001.tmp-00000000000000ff',
    ];
    for (const path of stale) fs.writeFileSync(join(archive, path), 'half');
    const kept = ['.other', 'tile/0/.001.tmp-x', 'tile/1/.000.tmp-00000000000000ff'];
    for (const path of kept) fs.writeFileSync(join(archive, path), 'kept');
    const tiles = new TileDirectory(archive);
    const listed = async () => {
      const paths: string[] = [];
      for await (const path of tiles.paths()) paths.push(path);
      return paths;
    };
    // Not the archive's: never listed (audit verify --archive does not see them).
    expect(await listed()).toEqual(['.other', 'tile/0/.001.tmp-x']);
    const writer = await tiles.openWriter();
    expect(fs.readdirSync(archive).sort()).toEqual(['.other', 'tile']);
    await writer.putOnce('tile/0/000', bytes('tile'));
    await writer.close();
    expect(fs.readdirSync(join(archive, 'tile/0')).sort()).toEqual(['.001.tmp-x', '000']);
    // A directory this run did not write in keeps its own until a run writes there.
    expect(fs.readdirSync(join(archive, 'tile/1'))).toEqual(['.000.tmp-00000000000000ff']);
  });

  it('completes a file an earlier version left cut short (it wrote in place); other bytes stay, refused', async () => {
    fs.mkdirSync(join(archive, 'tile/entries'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(join(archive, 'tile/entries/000'), '', { mode: 0o600 });
    fs.writeFileSync(join(archive, 'tile/entries/001'), 'bund', { mode: 0o600 });
    fs.writeFileSync(join(archive, 'tile/entries/002'), 'bundle!', { mode: 0o600 });
    fs.writeFileSync(join(archive, 'tile/entries/003'), 'bandle', { mode: 0o600 });
    const writer = await new TileDirectory(archive).openWriter();
    expect(await writer.putOnce('tile/entries/000', bytes('bundle'))).toBe('written');
    expect(await writer.putOnce('tile/entries/001', bytes('bundle'))).toBe('written');
    expect(await writer.putOnce('tile/entries/002', bytes('bundle'))).toBe('different');
    expect(await writer.putOnce('tile/entries/003', bytes('bundle'))).toBe('different');
    await writer.close();
    const read = (n: string) => fs.readFileSync(join(archive, `tile/entries/${n}`), 'utf8');
    expect(['000', '001', '002', '003'].map(read)).toEqual(['bundle', 'bundle', 'bundle!', 'bandle']);
    expect(fs.readdirSync(join(archive, 'tile/entries')).sort()).toEqual(['000', '001', '002', '003']);
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
