import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { ArchiveTiles, ArchiveTilesWriter, PutOnce } from '../../ports/archive-tiles.js';
import { CHECKPOINT_PATH } from '../../tlog/tiles.js';

/**
 * The trail's archive as a directory on a disk (decisions §15), POSIX: files and directories
 * readable by their owner only (0600, 0700); each file forced to the disk (fsync) as it is
 * written, the directories written in synced before the checkpoint, and the checkpoint written
 * to a temporary name, synced, then renamed over the old one and its directory synced, so a
 * reader sees the old one or the new one and never one that signs what is not on the disk.
 */

/** The temporary name a run writes the checkpoint to before renaming it into place. */
const TEMPORARY_CHECKPOINT = `.${CHECKPOINT_PATH}.`;

/** Writes `bytes` to a new file and forces them to the disk before it returns. */
function writeDurably(file: string, bytes: Uint8Array, flag: 'wx' | 'w'): void {
  const fd = openSync(file, flag, 0o600);
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

export class TileDirectory implements ArchiveTiles {
  constructor(readonly location: string) {}

  locationOf(path: string): string {
    return join(this.location, path);
  }

  async read(path: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(readFileSync(join(this.location, path)));
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return undefined;
      throw error;
    }
  }

  async has(path: string): Promise<boolean> {
    return existsSync(join(this.location, path));
  }

  /**
   * Depth first, each directory's names in byte order: the names of one directory per level
   * held at a time (a tile directory holds at most 1000). No directory yet: no files.
   */
  async *paths(): AsyncGenerator<string> {
    const root = this.location;
    if (!existsSync(root)) return;
    function* walk(at: string): Generator<string> {
      for (const entry of readdirSync(at, { withFileTypes: true })) {
        const path = join(at, entry.name);
        if (entry.isDirectory()) yield* walk(path);
        else yield relative(root, path).split('\\').join('/');
      }
    }
    yield* walk(root);
  }

  async openWriter(): Promise<ArchiveTilesWriter> {
    // A checkpoint written by a run that stopped before renaming it: never signed into the archive.
    let names: string[] = [];
    try {
      names = readdirSync(this.location);
    } catch {
      // No directory yet: nothing to remove.
    }
    for (const name of names)
      if (name.startsWith(TEMPORARY_CHECKPOINT)) rmSync(join(this.location, name), { force: true });
    return new TileDirectoryWriter(this.location);
  }
}

/** One run's writing: the directories it wrote files in are synced once, before the checkpoint. */
class TileDirectoryWriter implements ArchiveTilesWriter {
  private readonly touched = new Set<string>();

  constructor(private readonly dir: string) {}

  async putOnce(path: string, bytes: Uint8Array): Promise<PutOnce> {
    const file = join(this.dir, path);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      writeDurably(file, bytes, 'wx');
      this.touched.add(dirname(file));
      return 'written';
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error;
      return readFileSync(file).equals(bytes) ? 'present' : 'different';
    }
  }

  async replaceCheckpoint(note: Uint8Array): Promise<void> {
    for (const written of this.touched) syncDirectory(written);
    this.touched.clear();
    // Whole: a reader never sees part of one; and once it is on the disk, everything it signs is.
    const temporary = join(this.dir, `${TEMPORARY_CHECKPOINT}${process.pid}`);
    writeDurably(temporary, note, 'w');
    renameSync(temporary, join(this.dir, CHECKPOINT_PATH));
    syncDirectory(this.dir);
  }

  async close(): Promise<void> {
    // No lock is taken yet: nothing to release.
  }
}
