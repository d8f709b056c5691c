import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';

/**
 * The one way a file named by a variable or an option is read (a certificate, a key, a CA
 * bundle, a CRL, a JWKS, a policy, a secret): decisions §20. The file is opened without
 * blocking (`O_NONBLOCK`: the open of a FIFO with no writer returns at once instead of
 * waiting for one), and the descriptor opened is judged, not the path (no race between a
 * look and the read): anything but a regular file (a FIFO, a directory, a device, a socket)
 * is refused before a byte is read, as is one over a size bound; a caller's own rule on the
 * mode (the secret-file rule of secret-files.ts) is applied to that descriptor too.
 * Symlinks are followed (no `O_NOFOLLOW`): a mounted Kubernetes secret is a symlink into
 * `..data/`, itself a symlink, and what counts is the file the links lead to.
 *
 * Two forms: {@link readRegularFileSync} for start-up, and {@link readRegularFile}
 * (`fs.promises`) for a reload or a read while serving, so that a reload never blocks the
 * event loop. Both run one body, each with its own calls (`node:fs`'s or `fs.promises`'), so
 * they refuse in the same words: `LABEL PATH is not a regular file (a FIFO)`,
 * `LABEL PATH cannot be read (ENOENT)`, `LABEL PATH is over N bytes`, where LABEL is how
 * the caller names the file (`TLS_KEY:` for a variable, `--policy` for an option). A
 * refusal never holds the contents.
 *
 * `node:fs` only, which Node, Bun and Deno all offer alike; where a platform has no
 * `O_NONBLOCK` or `O_NOCTTY` (Windows), the flag is left out.
 */

/** What a caller throws for a refusal: its own error, with the message given. */
export type Refusal = (message: string) => Error;

/**
 * Most a named file may hold unless its reader says otherwise: a large CA bundle is a few
 * hundred KB, a CRL of a busy private CA a few MB. A bound, so that a file named by mistake
 * (a log, a disk image) is refused rather than read into memory.
 */
export const MAX_NAMED_FILE_BYTES = 8 * 1024 * 1024;

/** Read-only, never waiting for a FIFO's writer, never taking a terminal as the controlling one. */
const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** How much is read at a time. */
const CHUNK_BYTES = 64 * 1024;

export interface RegularFileOptions {
  /** Most bytes the file may hold; {@link MAX_NAMED_FILE_BYTES} unless given. */
  readonly maxBytes?: number;
  /**
   * Why a file of this mode (the opened file's `stat` mode, symlinks followed) must not be
   * used, or undefined when it may: judged before a byte is read. The whole message, as the
   * caller's rule words it.
   */
  readonly modeProblem?: (mode: number) => string | undefined;
}

/** A regular file as read: its mode (of the file opened) and its bytes. */
export interface RegularFile {
  readonly mode: number;
  readonly bytes: Buffer;
}

/** What a file that is not a regular file is, in a refusal's words. */
function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'an unknown kind';
}

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? 'error';

type Refusals = ReturnType<typeof refusalsOf>;

/** The refusals of one read, each in the same words for both forms. */
function refusalsOf(label: string, path: string, refuse: Refusal, maxBytes: number) {
  const named = `${label} ${path}`;
  return {
    unreadable: (error: unknown) => refuse(`${named} cannot be read (${codeOf(error)})`),
    notRegular: (kind: string) => refuse(`${named} is not a regular file (${kind})`),
    tooBig: () => refuse(`${named} is over ${maxBytes} bytes`),
  };
}

/**
 * Why an open failed, in a refusal: a socket cannot be opened at all (`ENXIO`), so what the
 * path is (`stats`, looked up after the failed open: nothing is read from it) names it.
 */
function openFailure(error: unknown, stats: Stats | undefined, refusals: Refusals): Error {
  if (stats !== undefined && !stats.isFile()) return refusals.notRegular(kindOf(stats));
  return refusals.unreadable(error);
}

/** Whether an open's failure is worth a look at what the path is: a socket's `ENXIO`. */
const isSocketLike = (error: unknown): boolean => codeOf(error) === 'ENXIO';

/**
 * The checks made on the descriptor opened, before a byte is read: a regular file, within
 * the bound, of a mode the caller allows.
 */
function judge(
  stats: Stats,
  refusals: Refusals,
  refuse: Refusal,
  options: RegularFileOptions,
  maxBytes: number,
): void {
  if (!stats.isFile()) throw refusals.notRegular(kindOf(stats));
  if (stats.size > maxBytes) throw refusals.tooBig();
  const problem = options.modeProblem?.(stats.mode);
  if (problem !== undefined) throw refuse(problem);
}

/**
 * The calls of one form: `node:fs`'s, each giving its answer, or `fs.promises`', each a promise
 * of it. A descriptor is `D`: a number, or a `FileHandle`.
 */
interface FileCalls<D> {
  open(path: string): D | Promise<D>;
  stat(path: string): Stats | Promise<Stats>;
  fstat(fd: D): Stats | Promise<Stats>;
  read(fd: D, into: Buffer): number | Promise<number>;
  close(fd: D): void | Promise<void>;
}

/** The synchronous form's calls, for start-up. */
const SYNC_CALLS: FileCalls<number> = {
  open: (path) => openSync(path, FLAGS),
  stat: statSync,
  fstat: fstatSync,
  read: (fd, into) => readSync(fd, into, 0, into.length, null),
  close: closeSync,
};

/** The asynchronous form's calls, which never block the event loop. */
const ASYNC_CALLS: FileCalls<FileHandle> = {
  open: (path) => open(path, FLAGS),
  stat: (path) => stat(path),
  fstat: (handle) => handle.stat(),
  read: async (handle, into) => (await handle.read(into, 0, into.length, null)).bytesRead,
  close: (handle) => handle.close(),
};

/**
 * The one body of a read, whichever form runs it: the open (a failure named by what the path
 * is, for a socket), the checks on the descriptor opened, the read in chunks within the
 * bound, and the close. Each call's answer is yielded: the synchronous form hands it straight
 * back, the asynchronous one awaits it first (and throws its failure back in, where the
 * synchronous call would have thrown). Every refusal is made here, in the same words for both.
 */
function* reading<D>(
  calls: FileCalls<D>,
  label: string,
  path: string,
  refuse: Refusal,
  options: RegularFileOptions,
): Generator<unknown, RegularFile, unknown> {
  const maxBytes = options.maxBytes ?? MAX_NAMED_FILE_BYTES;
  const refusals = refusalsOf(label, path, refuse, maxBytes);
  let fd: D;
  try {
    fd = (yield calls.open(path)) as D;
  } catch (error) {
    let stats: Stats | undefined;
    try {
      stats = isSocketLike(error) ? ((yield calls.stat(path)) as Stats) : undefined;
    } catch {
      // Gone since: the open's own error says it.
    }
    throw openFailure(error, stats, refusals);
  }
  try {
    let stats: Stats;
    try {
      stats = (yield calls.fstat(fd)) as Stats;
    } catch (error) {
      throw refusals.unreadable(error);
    }
    judge(stats, refusals, refuse, options, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      let read: number;
      try {
        read = (yield calls.read(fd, chunk)) as number;
      } catch (error) {
        throw refusals.unreadable(error);
      }
      if (read === 0) break;
      total += read;
      // Grown since the look: the bound holds all the same.
      if (total > maxBytes) throw refusals.tooBig();
      chunks.push(chunk.subarray(0, read));
    }
    return { mode: stats.mode, bytes: Buffer.concat(chunks, total) };
  } finally {
    yield calls.close(fd);
  }
}

/**
 * The file `path` that `label` names, read whole at start-up: opened without blocking,
 * refused with `refuse(message)` unless it is a regular file (symlinks followed) within the
 * size bound whose mode the caller allows, or when it cannot be read. Never waits on a FIFO.
 */
export function readRegularFileSync(
  label: string,
  path: string,
  refuse: Refusal,
  options: RegularFileOptions = {},
): RegularFile {
  const steps = reading(SYNC_CALLS, label, path, refuse, options);
  // Each call has answered already (or thrown, inside the body): its answer goes straight back.
  let next = steps.next();
  while (!next.done) next = steps.next(next.value);
  return next.value;
}

/**
 * {@link readRegularFileSync} without blocking the event loop (`fs.promises`): for a reload,
 * and for a file read while serving. The same steps, checks and words.
 */
export async function readRegularFile(
  label: string,
  path: string,
  refuse: Refusal,
  options: RegularFileOptions = {},
): Promise<RegularFile> {
  const steps = reading(ASYNC_CALLS, label, path, refuse, options);
  let next = steps.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = await next.value;
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(answer);
  }
  return next.value;
}
