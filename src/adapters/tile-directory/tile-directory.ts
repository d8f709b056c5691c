import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import type { ArchiveTiles, ArchiveTilesWriter, PutOnce } from '../../ports/archive-tiles.js';
import { CHECKPOINT_PATH } from '../../tlog/tiles.js';

/**
 * The trail's archive as a directory on a disk (decisions §15, §18), POSIX: files and
 * directories readable by their owner only (0600, 0700). Every file is put atomically: its
 * bytes written to a temporary name in its own directory and forced to the disk (fsync), then
 * linked to its name, which fails rather than replace a file there. The directories written in
 * (and those made) are synced before the checkpoint, which is written to a temporary name,
 * synced, renamed over the old one, and its directory synced. So a run killed at any instant
 * leaves whole files at the archive's names, never part of one; a reader sees the old
 * checkpoint or the new one, never one that signs what is not on the disk; and what the killed
 * run left is only temporary files, removed by the next run as it writes in their directory.
 */

/** A temporary file of a put or of the checkpoint: `.NAME.tmp-RUN`, beside NAME; RUN is the run's 16 hex digits. */
const TEMPORARY = /^\..+\.tmp-[0-9a-f]{16}$/;
/** The temporary checkpoint an earlier version named by process id: `.checkpoint.PID`. */
const OLD_TEMPORARY_CHECKPOINT = new RegExp(`^\\.${CHECKPOINT_PATH}\\.[0-9]+$`);

const temporaryOf = (file: string, run: string) => join(dirname(file), `.${basename(file)}.tmp-${run}`);

/** Writes `bytes` to a new file and forces them to the disk before it returns. */
function writeDurably(file: string, bytes: Uint8Array): void {
  const fd = openSync(file, 'wx', 0o600);
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

/** What the file-system error says went wrong: ENOENT, EISDIR, … */
const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/**
 * Whether `there` is `bytes` cut short: a file an earlier version of this writer (which wrote
 * in place) left when it was stopped mid-write. Only a run's own new files can be such: they
 * are put after the archive's checkpoint, which signs none of them.
 */
const cutShort = (there: Buffer, bytes: Uint8Array) =>
  there.length < bytes.length && there.equals(bytes.subarray(0, there.length));

export class TileDirectory implements ArchiveTiles {
  constructor(readonly location: string) {}

  locationOf(path: string): string {
    return join(this.location, path);
  }

  async read(path: string): Promise<Uint8Array | undefined> {
    try {
      // The Buffer's own bytes as a plain Uint8Array, not a copy of them: a subject access
      // request reads tens of thousands of 64 KiB bundles, and a copy of each is garbage twice over.
      const bytes = readFileSync(join(this.location, path));
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return undefined;
      throw error;
    }
  }

  async readInto(path: string, scratch: { bytes: Uint8Array }): Promise<Uint8Array | undefined> {
    let fd: number;
    try {
      fd = openSync(join(this.location, path), 'r');
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const { size } = fstatSync(fd);
      if (scratch.bytes.length < size)
        scratch.bytes = new Uint8Array(Math.max(size, 2 * scratch.bytes.length));
      let done = 0;
      while (done < size) {
        const read = readSync(fd, scratch.bytes, done, size - done, done);
        if (read === 0) break;
        done += read;
      }
      return scratch.bytes.subarray(0, done);
    } finally {
      closeSync(fd);
    }
  }

  async has(path: string): Promise<boolean> {
    return existsSync(join(this.location, path));
  }

  /**
   * Depth first, each directory's names in byte order: the names of one directory per level
   * held at a time (a tile directory holds at most 1000). No directory yet: no files. The
   * temporary files a stopped run left are not the archive's, and not listed.
   */
  async *paths(): AsyncGenerator<string> {
    const root = this.location;
    if (!existsSync(root)) return;
    function* walk(at: string): Generator<string> {
      for (const entry of readdirSync(at, { withFileTypes: true })) {
        const path = join(at, entry.name);
        if (entry.isDirectory()) yield* walk(path);
        else if (!TEMPORARY.test(entry.name) && !(at === root && OLD_TEMPORARY_CHECKPOINT.test(entry.name)))
          yield relative(root, path).split('\\').join('/');
      }
    }
    yield* walk(root);
  }

  async openWriter(): Promise<ArchiveTilesWriter> {
    const writer = new TileDirectoryWriter(this.location);
    // The temporary checkpoint of a run that stopped before renaming it: never signed into the archive.
    writer.removeStale(this.location);
    return writer;
  }
}

/**
 * One run's writing, named by a random RUN: its temporary files are its own. One run at a
 * time writes an archive (the store's lock, decisions §18), so any other run's temporary file
 * is stale: a directory's are removed the first time this run writes in it.
 */
class TileDirectoryWriter implements ArchiveTilesWriter {
  private readonly run = randomBytes(8).toString('hex');
  /** Directories whose stale temporary files were removed (and which exist). */
  private readonly ready = new Set<string>();
  /** Directories whose entries changed: synced once, before the checkpoint. */
  private readonly touched = new Set<string>();

  constructor(private readonly dir: string) {}

  /** Removes the temporary files of other runs in `dir` (only those: nothing else is touched). */
  removeStale(dir: string): void {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return;
      throw error;
    }
    for (const name of names) {
      const stale =
        (TEMPORARY.test(name) && !name.endsWith(`.tmp-${this.run}`)) ||
        (dir === this.dir && OLD_TEMPORARY_CHECKPOINT.test(name));
      if (stale) rmSync(join(dir, name), { force: true });
    }
    this.ready.add(dir);
  }

  /** Makes `dir` (0700, and what holds it), its new names to be synced; or clears it of stale temporary files. */
  private prepare(dir: string): void {
    if (this.ready.has(dir)) return;
    const made = mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (made === undefined) {
      this.removeStale(dir);
      return;
    }
    // Each directory made is a new name in the one above it.
    for (let at = dir; ; at = dirname(at)) {
      this.touched.add(dirname(at));
      this.ready.add(at);
      if (at === made || at === dirname(at)) break;
    }
  }

  async putOnce(path: string, bytes: Uint8Array): Promise<PutOnce> {
    const file = join(this.dir, path);
    this.prepare(dirname(file));
    const temporary = temporaryOf(file, this.run);
    writeDurably(temporary, bytes);
    try {
      linkSync(temporary, file);
      this.touched.add(dirname(file));
      return 'written';
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error;
      const there = readFileSync(file);
      if (there.equals(bytes)) return 'present';
      if (!cutShort(there, bytes)) return 'different';
      renameSync(temporary, file);
      this.touched.add(dirname(file));
      return 'written';
    } finally {
      rmSync(temporary, { force: true });
    }
  }

  async replaceCheckpoint(note: Uint8Array): Promise<void> {
    this.prepare(this.dir);
    for (const written of this.touched) syncDirectory(written);
    this.touched.clear();
    // Whole: a reader never sees part of one; and once it is on the disk, everything it signs is.
    const checkpoint = join(this.dir, CHECKPOINT_PATH);
    const temporary = temporaryOf(checkpoint, this.run);
    writeDurably(temporary, note);
    renameSync(temporary, checkpoint);
    syncDirectory(this.dir);
  }

  async close(): Promise<void> {
    // Nothing held: the files are whole and named, and the directory's lock (one run at a time) is the store's.
  }
}
