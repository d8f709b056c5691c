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
  /**
   * {@link read} into `scratch.bytes` (made larger when the file does not fit): a view of it,
   * valid until the next read into the same scratch. For a reader of many files in turn (a
   * subject access request reads tens of thousands of bundles), so that each is not a new
   * buffer to collect. A store without it is read with {@link read}.
   */
  readInto?(path: string, scratch: { bytes: Uint8Array }): Promise<Uint8Array | undefined>;
  /** Whether something is at `path`, without reading it. */
  has(path: string): Promise<boolean>;
  /**
   * The path of every file of the archive present, each once, one at a time: an archive of
   * millions of files is walked in bounded memory. A store's temporary files (of a put that
   * stopped before its file was in place) are not the archive's, and not listed.
   */
  paths(): AsyncIterable<string>;
  /**
   * Opens the archive to be written by one run; nothing is created until a file is put. What an
   * earlier run that stopped before its end left behind (a temporary file never put in place) is
   * removed by this run, at the latest as it writes beside it. One writer at a time: the caller
   * holds the trail's archive lock (decisions §18), so another run's temporary files are stale.
   */
  openWriter(): Promise<ArchiveTilesWriter>;
}

/** What {@link ArchiveTilesWriter.putOnce} found: the file written; the same bytes there already; or other bytes there, left as they are. */
export type PutOnce = 'written' | 'present' | 'different';

/** One run's writing of an archive (see {@link ArchiveTiles.openWriter}). */
export interface ArchiveTilesWriter {
  /**
   * Puts `bytes` at `path` unless a file is there, creating what holds it, atomically: a put
   * stopped at any instant leaves the whole file at `path` or none (a directory: the bytes
   * written to a temporary name beside it and synced, then linked to `path`, which never
   * replaces a file). A file is never replaced by other bytes: they stay, and `different` says
   * so; the one exception is a file that is `bytes` cut short, which only an earlier version's
   * run, stopped mid-write, could leave: it is completed. The bytes are durable when it
   * returns, the file's name by the next {@link replaceCheckpoint} at the latest.
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
