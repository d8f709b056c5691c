// The JSONL audit trail's file itself: opened to be read or by its one writer (the lock beside
// it), an unfinished last line cut off, each batch appended whole or cut back off, and its
// records read back line by line or by crn.
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import type { ChainHead } from '../../domain/audit/checkpoint.js';
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import type { TimeWindow } from '../../ports/audit-log.js';
import { StoreError, type StoreLog } from '../../ports/stores.js';
import { VERIFY_BATCH } from '../shared/audit-chain.js';
import { JsonlAuditStoreError, linesOf, newlineBefore, recordOf } from './audit-format.js';
import { JsonlCrnIndex } from './crn-index.js';
import { WriterLock } from './writer-lock.js';

/** The one call that puts a batch in the file (bytes written); tests replace it to act out a full disk. */
export type WriteText = (fd: number, text: string) => number;

export interface JsonlAuditOptions {
  /** `write`: `serve` appends (the file is created if absent, one writer at a time). `read`: the audit commands. */
  readonly mode: 'write' | 'read';
  readonly log?: StoreLog;
  readonly writeText?: WriteText;
}

/** What opening for writing holds: the file, which file it is (to notice it moved), and the writer lock. */
interface Writer {
  readonly fd: number;
  readonly dev: number;
  readonly ino: number;
  readonly lock: WriterLock;
}

/**
 * A failure met while opening the trail for writing, as the store says it: a store error as
 * it is, any other naming the file.
 */
export function openingError(path: string, error: unknown): Error {
  if (error instanceof StoreError) return error;
  return new JsonlAuditStoreError(
    `audit store ${path} cannot be opened for writing (${(error as Error).message})`,
  );
}

/**
 * Finds the file's end and the chain head: the last whole line. An unfinished last line (a
 * write cut off by the machine stopping) was never acknowledged, so no response depended on
 * it: it is cut off and logged.
 */
function recoverTail(
  path: string,
  fd: number,
  size: number,
  log: StoreLog | undefined,
): { readonly end: number; readonly last: ChainHead | undefined } {
  const lastNewline = newlineBefore(fd, size);
  const end = lastNewline + 1;
  if (end !== size) {
    ftruncateSync(fd, end);
    log?.(
      'warn',
      { store: 'audit', path, bytes: size - end },
      'the audit file ended in an unfinished line (never acknowledged); it was cut off',
    );
  }
  if (end === 0) return { end, last: undefined };
  const from = newlineBefore(fd, lastNewline) + 1;
  const line = new Uint8Array(lastNewline - from);
  readSync(fd, line, 0, line.length, from);
  const last = recordOf(new TextDecoder().decode(line));
  if (last === undefined) {
    throw new JsonlAuditStoreError(
      `the last line of audit store ${path} is not an audit record; run case-read audit verify --audit-store jsonl:${path}`,
    );
  }
  return { end, last: { seq: last.seq, hash: last.hash } };
}

/**
 * The trail's file as its store holds it. Only one process may append to it, which a lock
 * file beside it (`PATH.lock`, holding the writer's pid) enforces. A write that fails (a full
 * disk) is cut back off the file, so a refused batch leaves no half line behind.
 */
export class JsonlAuditFile {
  /** The file's length up to the last whole record this writer knows of. */
  private end: number;
  /** Set when a failed write could not be cut back: nothing is appended until it can. */
  private damaged = false;
  /** The last record when the file was opened for writing; none when it was empty, or is only read. */
  readonly last: ChainHead | undefined;
  private readonly byCrn: JsonlCrnIndex;

  private constructor(
    readonly path: string,
    private readonly writer: Writer | undefined,
    private readonly writeText: WriteText,
    tail: { readonly end: number; readonly last: ChainHead | undefined },
  ) {
    this.end = tail.end;
    this.last = tail.last;
    // The writer's index reaches only the records it has acknowledged (a failed batch is cut off).
    this.byCrn = new JsonlCrnIndex(path, () => (writer === undefined ? undefined : this.end));
  }

  static open(path: string, options: JsonlAuditOptions): JsonlAuditFile {
    if (options.mode === 'read') {
      try {
        if (!statSync(path).isFile()) throw new Error('not a file');
      } catch (error) {
        throw new JsonlAuditStoreError(`audit store ${path} cannot be read (${(error as Error).message})`);
      }
      return new JsonlAuditFile(path, undefined, () => 0, { end: 0, last: undefined });
    }
    const lock = WriterLock.take(`${path}.lock`, (message) => new JsonlAuditStoreError(message), path);
    let fd: number | undefined;
    try {
      fd = openSync(path, 'a+', 0o600);
      const stat = fstatSync(fd);
      return new JsonlAuditFile(
        path,
        { fd, dev: stat.dev, ino: stat.ino, lock },
        options.writeText ?? ((fd, text) => writeSync(fd, text)),
        recoverTail(path, fd, stat.size, options.log),
      );
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      lock.release();
      throw openingError(path, error);
    }
  }

  /** The open file, for its writer; none when only read. */
  get fd(): number | undefined {
    return this.writer?.fd;
  }

  /** The file's length up to the last whole record this writer knows of. */
  get size(): number {
    return this.end;
  }

  requireWriter(): void {
    if (this.writer === undefined) {
      throw new JsonlAuditStoreError(`audit store ${this.path} was opened to be read`);
    }
  }

  /**
   * Appends the text of the batch `make` makes, once the file is known to be the one open and
   * whole ({@link ready}), in one write; whatever part of it reached the file is cut off again
   * if the write fails. The batch, once written.
   */
  append<T extends { readonly text: string }>(make: () => T): T {
    const fd = (this.writer as Writer).fd;
    this.ready(fd);
    const batch = make();
    const length = Buffer.byteLength(batch.text, 'utf8');
    let written = 0;
    try {
      written = this.writeText(fd, batch.text);
      if (written !== length) throw new Error(`short write: ${written} of ${length} bytes`);
    } catch (error) {
      // Whatever part of the batch reached the file is cut off again; if even that fails,
      // the next batch tries before it writes.
      try {
        ftruncateSync(fd, this.end);
      } catch {
        this.damaged = true;
      }
      throw error;
    }
    this.end += length;
    return batch;
  }

  /**
   * The file at the path is still the one open (a file moved or removed while open would take
   * records nobody can find: refused instead), and what a write that could not be cut back
   * left is cut off now.
   */
  private ready(fd: number): void {
    let now: { dev: number; ino: number };
    try {
      now = statSync(this.path);
    } catch {
      now = { dev: -1, ino: -1 };
    }
    if (now.dev !== this.writer?.dev || now.ino !== this.writer.ino) {
      throw new JsonlAuditStoreError(
        `audit store ${this.path} was moved or removed while open; restart the service to start a new file`,
      );
    }
    if (this.damaged) {
      ftruncateSync(fd, this.end);
      this.damaged = false;
    }
  }

  /** For readiness: the file at the path is still the one being written, and nothing is left damaged. */
  ping(): void {
    if (this.writer !== undefined) this.ready(this.writer.fd);
  }

  /** Every line of the file in order, as its record or, when it is not one, its line number. */
  async *records(): AsyncGenerator<StoredAuditRecord | { unreadable: number }> {
    for await (const { line, number } of linesOf(this.path)) {
      yield recordOf(line) ?? { unreadable: number };
    }
  }

  /** The records from `from` on: the lines before it are counted, not parsed. */
  async *recordsFrom(
    from: number,
    limit = Number.POSITIVE_INFINITY,
  ): AsyncGenerator<readonly StoredAuditRecord[]> {
    let batch: StoredAuditRecord[] = [];
    for await (const { line, number } of linesOf(this.path)) {
      if (number < from) continue;
      if (number >= from + limit) break;
      const record = recordOf(line);
      if (record === undefined) {
        throw new JsonlAuditStoreError(
          `line ${number} of audit store ${this.path} is not an audit record: it was changed`,
        );
      }
      batch.push(record);
      if (batch.length === VERIFY_BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** Through an index by crn held in memory, caught up with the file when asked (crn-index.ts). */
  recordsNaming(crn: string, window?: TimeWindow): AsyncIterable<readonly StoredAuditRecord[]> {
    return this.byCrn.recordsNaming(crn, window);
  }

  /** Closes the file and gives up the writer lock. */
  close(): void {
    if (this.writer === undefined) return;
    closeSync(this.writer.fd);
    this.writer.lock.release();
  }
}
