import { mkdtempSync } from 'node:fs';
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenSpill, Spill } from '../../ports/spill.js';

/**
 * Spills as temporary files (decisions §23): each opened in a directory of this process's own
 * (0700, under the OS's temporary directory: TMPDIR, a volume of the pod's), created new (0600)
 * and unlinked at once, so it has no name another process could open, and its space comes back
 * when it is closed or the process ends, whatever ends it. One that is not closed within
 * `maxAgeMs` (an answer never sent) closes itself.
 */

/** This process's directory of spills in each parent, made at the first (mkdtemp: 0700). */
const directories = new Map<string, string>();
function directoryOf(parent: string): string {
  let directory = directories.get(parent);
  if (directory === undefined) {
    directory = mkdtempSync(join(parent, 'case-read-spill-'));
    directories.set(parent, directory);
  }
  return directory;
}

class SpillFile implements Spill {
  private size = 0;
  private closed = false;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(
    private readonly handle: FileHandle,
    maxAgeMs: number,
  ) {
    this.timer = setTimeout(() => void this.close(), maxAgeMs);
    // Deno's timers have no unref; a spill never keeps a process alive where they do.
    (this.timer as { unref?: () => void }).unref?.();
  }

  async append(bytes: Uint8Array): Promise<void> {
    if (this.closed) throw new Error('the spill was closed');
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await this.handle.write(bytes, done, bytes.length - done, this.size + done);
      done += bytesWritten;
    }
    this.size += bytes.length;
  }

  async *pieces(size: number): AsyncGenerator<Uint8Array> {
    // One buffer for every piece (the port's contract: each is valid until the next is asked for).
    const buffer = new Uint8Array(Math.min(size, this.size));
    for (let at = 0; at < this.size; ) {
      if (this.closed) throw new Error('the spill was closed before it was read');
      const { bytesRead } = await this.handle.read(buffer, 0, Math.min(size, this.size - at), at);
      if (bytesRead === 0) throw new Error(`the spill ends at ${at} bytes, not ${this.size}`);
      at += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    await this.handle.close();
  }
}

/** Spills in `parent` (the OS's temporary directory by default), each closed after `maxAgeMs` at the latest. */
/** Spills made by this process: each file's own name in its directory. */
let made = 0;

export function spillFiles({ parent = tmpdir(), maxAgeMs = 5 * 60_000 } = {}): OpenSpill {
  /** A new file of its own name (never one already there), and that name. */
  const create = async (): Promise<{ handle: FileHandle; path: string }> => {
    const path = join(directoryOf(parent), String(made++));
    try {
      return { handle: await open(path, 'wx+', 0o600), path };
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') throw error;
      // The directory was removed (a cleaner of the temporary directory): made again, once.
      directories.delete(parent);
      const again = join(directoryOf(parent), String(made++));
      return { handle: await open(again, 'wx+', 0o600), path: again };
    }
  };
  return async () => {
    const { handle, path } = await create();
    try {
      await unlink(path);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new SpillFile(handle, maxAgeMs);
  };
}
