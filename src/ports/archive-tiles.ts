/**
 * The files of the trail's archive (decisions §15): a C2SP `tlog-tiles` tree of files, each
 * named by its path below the archive (`checkpoint`, `tile/0/x001/234`, `tile/entries/000.p/7`,
 * …). Every file but the checkpoint is written once and never replaced by other bytes; the
 * checkpoint (`CHECKPOINT_PATH`), the signed note of what the archive holds, is replaced whole,
 * and last. The writer, the reader and the verifier of the archive (src/app/audit) work over
 * this alone; a directory on a disk (fsync, rename, modes) is src/adapters/tile-directory.
 */
export interface ArchiveTiles {
  /** Where the archive is, as messages name it (a directory: as it was given). */
  readonly location: string;
  /** Where one of its files is, as messages name it. */
  locationOf(path: string): string;
  /**
   * The bytes of the file at `path`, or undefined when there is none. A file there that cannot
   * be read fails, saying why (an Error with the `code` a file system gives, EISDIR, EACCES, …).
   */
  read(path: string): Promise<Uint8Array | undefined>;
  /** Whether something is at `path`, without reading it. */
  has(path: string): Promise<boolean>;
  /**
   * The path of every file present (a temporary file left by a run that stopped included), each
   * once, one at a time: an archive of millions of files is walked in bounded memory.
   */
  paths(): AsyncIterable<string>;
  /**
   * Opens the archive to be written by one run: what an earlier run that stopped before its end
   * left behind (a temporary file never put in place) is removed; nothing is created until a file
   * is put. One writer at a time: a lock over the archive, when the store takes one, is taken
   * here and released by {@link ArchiveTilesWriter.close}.
   */
  openWriter(): Promise<ArchiveTilesWriter>;
}

/** What {@link ArchiveTilesWriter.putOnce} found: the file written; the same bytes there already; or other bytes there, left as they are. */
export type PutOnce = 'written' | 'present' | 'different';

/** One run's writing of an archive (see {@link ArchiveTiles.openWriter}). */
export interface ArchiveTilesWriter {
  /**
   * Puts `bytes` at `path` unless a file is there, creating what holds it. A file is never
   * replaced: other bytes there stay, and `different` says so. The bytes are durable when it
   * returns, the file's name by the next {@link replaceCheckpoint} at the latest. A store may
   * make each put atomic: the bytes written to a temporary name beside it and synced, then put
   * in place by an operation that never replaces a file (a link), the place synced.
   */
  putOnce(path: string, bytes: Uint8Array): Promise<PutOnce>;
  /**
   * Replaces the checkpoint with `note`: after every file put so far is durable, and whole (a
   * reader sees the old checkpoint or the new one, never part of either); durable when it returns.
   */
  replaceCheckpoint(note: Uint8Array): Promise<void>;
  /** Ends the run's writing (and releases its lock). Files put after the last checkpoint stay, signed by none until the next run's. */
  close(): Promise<void>;
}
