import type { ArchiveTiles, ArchiveTilesWriter, PutOnce } from '../../src/ports/archive-tiles.js';
import { CHECKPOINT_PATH } from '../../src/tlog/tiles.js';

/**
 * The archive port (src/ports/archive-tiles.ts) in memory: the second adapter the contract
 * runs, and an archive the application's tests write, read and verify without a disk. It is
 * kept here, not in src/adapters: nothing in the service would choose it (an archive exists to
 * outlive the process that wrote it, and a store lets go of what it holds once archived).
 *
 * It keeps the port's promises as simply as they can be kept (a file is never replaced; the
 * checkpoint is replaced whole; one writer at a time), and says so loudly when they are broken:
 * a second writer opened before the first is closed is refused, so a test that archives twice
 * at once finds out.
 */
export class MemoryArchiveTiles implements ArchiveTiles {
  readonly files = new Map<string, Uint8Array>();
  private writing = false;

  constructor(readonly location = 'memory:archive') {}

  locationOf(path: string): string {
    return `${this.location}/${path}`;
  }

  async read(path: string): Promise<Uint8Array | undefined> {
    const bytes = this.files.get(path);
    return bytes === undefined ? undefined : bytes.slice();
  }

  async has(path: string): Promise<boolean> {
    return this.files.has(path) || [...this.files.keys()].some((file) => file.startsWith(`${path}/`));
  }

  async *paths(): AsyncGenerator<string> {
    for (const path of [...this.files.keys()].sort()) yield path;
  }

  async openWriter(): Promise<ArchiveTilesWriter> {
    if (this.writing) throw new Error(`${this.location} is being written by another run`);
    this.writing = true;
    let open = true;
    const files = this.files;
    const end = () => {
      if (open) this.writing = false;
      open = false;
    };
    const whileOpen = () => {
      if (!open) throw new Error('this writer was closed');
    };
    return {
      async putOnce(path: string, bytes: Uint8Array): Promise<PutOnce> {
        whileOpen();
        const there = files.get(path);
        if (there === undefined) {
          files.set(path, bytes.slice());
          return 'written';
        }
        return Buffer.from(there).equals(bytes) ? 'present' : 'different';
      },
      async replaceCheckpoint(note: Uint8Array): Promise<void> {
        whileOpen();
        files.set(CHECKPOINT_PATH, note.slice());
      },
      async close(): Promise<void> {
        end();
      },
    };
  }
}
