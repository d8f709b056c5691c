import {
  appendFileSync,
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { open as openAsync } from 'node:fs/promises';
import {
  type AuditFieldTexts,
  auditFieldTexts,
  canonicalAuditText,
} from '../../domain/audit/canonical-text.js';
import { GENESIS_HASH } from '../../domain/audit/chain.js';
import { AuditChainWalker, type AuditVerification } from '../../domain/audit/chain-walker.js';
import {
  type AuditCheckpoint,
  type ChainHead,
  type CheckpointSet,
  checkpointIdOf,
  checkpointOf,
} from '../../domain/audit/checkpoint.js';
import {
  type AuditQuery,
  type AuditRecord,
  CURRENT_AUDIT_VERSION,
  chainHashOf,
  matchesAuditQuery,
  type StoredAuditRecord,
} from '../../domain/audit/record.js';
import type { AuditLog, Forgotten, TreeHead } from '../../ports/audit-log.js';
import type { Deadline } from '../../ports/deadline.js';
import { StoreError, type StoreLog } from '../../ports/stores.js';
import { appendLeaves, frontierIndexes, type Hash, storedCount } from '../../tlog/merkle.js';
import { VERIFY_BATCH } from '../shared/audit-chain.js';
import * as tree from '../shared/audit-tree.js';
import { GroupCommit } from '../shared/group-commit.js';
import { sha256Bytes, sha256Hex } from '../shared/sha256.js';
import { WriterLock } from './writer-lock.js';

/** The store cannot be opened or used as asked; the message says what to do. */
export class JsonlAuditStoreError extends StoreError {
  override readonly name = 'JsonlAuditStoreError';
}

/** The one call that puts a batch in the file (bytes written); tests replace it to act out a full disk. */
export type WriteText = (fd: number, text: string) => number;

export interface JsonlAuditOptions {
  /** `write`: `serve` appends (the file is created if absent, one writer at a time). `read`: the audit commands. */
  readonly mode: 'write' | 'read';
  readonly log?: StoreLog;
  readonly writeText?: WriteText;
}

/** How far back from the end the last record is looked for at a time. */
const TAIL_CHUNK = 64 * 1024;

/**
 * The line of one stored record (current format): its version, every field by name, then
 * the two hashes. A line without `version` is a version-1 record, written before; one
 * without `issued` (version 1 or 2) reads as null there.
 */
function lineOf(texts: AuditFieldTexts, seq: number, previousHash: string, hash: string): string {
  return `{"version":${CURRENT_AUDIT_VERSION},"seq":${seq},"at":${texts.at},"requestId":${texts.requestId},"clientId":${texts.clientId},"certificateSerial":${texts.certificateSerial},"onBehalfOf":${texts.onBehalfOf},"operation":${texts.operation},"crn":${texts.crn},"status":${texts.status},"problem":${texts.problem},"access":${texts.access},"issued":${texts.issued},"previousHash":"${previousHash}","hash":"${hash}"}\n`;
}

/** A line read back, or undefined when it is not a whole audit record. */
function recordOf(line: string): StoredAuditRecord | undefined {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const str = (k: string) => typeof value[k] === 'string';
  const strOrNull = (k: string) => value[k] === null || str(k);
  if (
    typeof value !== 'object' ||
    value === null ||
    !Number.isSafeInteger(value.seq) ||
    !str('at') ||
    !str('requestId') ||
    !str('clientId') ||
    !str('certificateSerial') ||
    !strOrNull('onBehalfOf') ||
    !str('operation') ||
    !strOrNull('crn') ||
    !Number.isInteger(value.status) ||
    (value.version !== undefined && !Number.isSafeInteger(value.version)) ||
    (value.problem !== undefined && !strOrNull('problem')) ||
    (value.access !== undefined && !strOrNull('access')) ||
    (value.issued !== undefined && !strOrNull('issued')) ||
    !str('previousHash') ||
    !str('hash')
  ) {
    return undefined;
  }
  const at = new Date(value.at as string);
  if (Number.isNaN(at.getTime())) return undefined;
  return {
    version: (value.version as number | undefined) ?? 1,
    seq: value.seq as number,
    at,
    requestId: value.requestId as string,
    clientId: value.clientId as string,
    certificateSerial: value.certificateSerial as string,
    onBehalfOf: value.onBehalfOf as string | null,
    operation: value.operation as string,
    crn: value.crn as string | null,
    status: value.status as number,
    problem: (value.problem as string | null | undefined) ?? null,
    access: (value.access as string | null | undefined) ?? null,
    issued: (value.issued as string | null | undefined) ?? null,
    previousHash: value.previousHash as string,
    hash: value.hash as string,
  };
}

/** The position of the last newline before `before`, or -1: read backwards a chunk at a time. */
function newlineBefore(fd: number, before: number): number {
  let position = before;
  const chunk = new Uint8Array(TAIL_CHUNK);
  while (position > 0) {
    const length = Math.min(TAIL_CHUNK, position);
    position -= length;
    readSync(fd, chunk, 0, length, position);
    const at = chunk.subarray(0, length).lastIndexOf(0x0a);
    if (at !== -1) return position + at;
  }
  return -1;
}

/** The checkpoints of the checkpoint file as its writer knows them: the highest, and each one's id. */
interface HeldCheckpoints {
  newest: AuditCheckpoint | undefined;
  /** The highest that carries a signed note. */
  newestNoted: AuditCheckpoint | undefined;
  readonly signatures: Set<string>;
}

/** Notes one checkpoint of the file in what its writer holds. */
function hold(held: HeldCheckpoints, c: AuditCheckpoint): void {
  held.signatures.add(checkpointIdOf(c));
  if (held.newest === undefined || c.seq > held.newest.seq) held.newest = c;
  if (c.note !== undefined && (held.newestNoted === undefined || c.seq > held.newestNoted.seq))
    held.newestNoted = c;
}

/** The checkpoint file beside the trail: `PATH.checkpoints`, one signed checkpoint per line. */
export const checkpointPathOf = (path: string) => `${path}.checkpoints`;

/**
 * The tree file beside the trail: `PATH.tree`, the tree's stored hashes end to end (stored
 * hash i at byte 32·i), appended by the writer as the tree grows, never changed.
 */
export const treePathOf = (path: string) => `${path}.tree`;

/** How many whole leaves the tree file holds, and the bytes that are whole. */
function treeFileSize(file: string): {
  readonly size: number;
  readonly bytes: number;
  readonly length: number;
} {
  const length = existsSync(file) ? statSync(file).size : 0;
  const size = tree.sizeOfStored(Math.floor(length / 32));
  return { size, bytes: storedCount(size) * 32, length };
}

/** Stored hashes read from the tree file by index. */
function hashesOfFile(file: string, indexes: readonly number[]): Map<number, Hash> {
  const found = new Map<number, Hash>();
  if (indexes.length === 0) return found;
  const { bytes } = treeFileSize(file);
  const fd = openSync(file, 'r');
  try {
    for (const i of indexes) {
      if ((i + 1) * 32 > bytes) continue;
      const hash = new Uint8Array(32);
      if (readSync(fd, hash, 0, 32, i * 32) === 32) found.set(i, hash);
    }
  } finally {
    closeSync(fd);
  }
  return tree.hashesOfRows(
    [...found].map(([i, hash]) => ({ i, hash })),
    indexes,
  );
}

/** Every complete line of the file, with its number, oldest first; an unfinished last line is not one. */
async function* linesOf(path: string): AsyncGenerator<{ line: string; number: number }> {
  const handle = await openAsync(path, 'r');
  try {
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(256 * 1024);
    let rest = '';
    let number = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return;
      const text = rest + decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        number++;
        yield { line: text.slice(start, end), number };
        start = end + 1;
      }
      rest = text.slice(start);
    }
  } finally {
    await handle.close();
  }
}

/**
 * The audit trail as an append-only file of JSON lines (`AUDIT_STORE=jsonl:PATH`), each
 * record one line carrying the same SHA-256 chain as the SQL stores (`canonicalAuditText`).
 *
 * Group commit as in the SQLite store: the records of one event-loop turn go to the file in
 * one write at the end of the turn, and each `append` resolves only once that write has
 * returned, so nothing is answered that is not in the file. Like SQLite's WAL at
 * synchronous=NORMAL, a record survives the process dying; an operating-system crash can
 * lose the last moments (no fsync per batch).
 *
 * One writer: the file is the chain, so only one process may append to it, which a lock
 * file beside it (`PATH.lock`, holding the writer's pid) enforces. Several instances need
 * `sqlite:` (one machine) or `postgres://`. A write that fails (a full disk) is cut back off
 * the file, so a refused batch leaves no half line behind, and the chain stays where it was.
 *
 * Signed checkpoints go to a file of their own beside it, `PATH.checkpoints` (one JSON
 * line each), written by the same writer.
 */
export class JsonlAuditLog implements AuditLog {
  private readonly commits = new GroupCommit<AuditRecord>((batch) => this.write(batch));
  /** The file's length up to the last whole record this writer knows of. */
  private size = 0;
  /** Set when a failed write could not be cut back: nothing is appended until it can. */
  private damaged = false;
  private seq = 0;
  private headHash = GENESIS_HASH;
  /**
   * The checkpoint file as this writer knows it, once read (it is the only writer): the
   * highest checkpoint, and every one's signature, so a checkpoint given twice is kept once.
   */
  private held: HeldCheckpoints | undefined;
  /** The tree as grown (the writer's): its tip, and the hashes of the records written since. */
  private tip: tree.TreeTip = { size: 0, frontier: [] };
  private pendingLeaves: string[] = [];

  private constructor(
    private readonly path: string,
    private readonly fd: number | undefined,
    private readonly identity: { dev: number; ino: number } | undefined,
    private readonly lock: WriterLock | undefined,
    private readonly writeText: WriteText,
  ) {}

  static open(path: string, options: JsonlAuditOptions): JsonlAuditLog {
    if (options.mode === 'read') {
      try {
        if (!statSync(path).isFile()) throw new Error('not a file');
      } catch (error) {
        throw new JsonlAuditStoreError(`audit store ${path} cannot be read (${(error as Error).message})`);
      }
      return new JsonlAuditLog(path, undefined, undefined, undefined, () => 0);
    }
    const lock = WriterLock.take(`${path}.lock`, (message) => new JsonlAuditStoreError(message), path);
    let fd: number | undefined;
    try {
      fd = openSync(path, 'a+', 0o600);
      const stat = fstatSync(fd);
      const log = new JsonlAuditLog(
        path,
        fd,
        { dev: stat.dev, ino: stat.ino },
        lock,
        options.writeText ?? ((fd, text) => writeSync(fd, text)),
      );
      log.recoverTail(stat.size, options.log);
      log.openTree();
      return log;
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      lock.release();
      if (error instanceof StoreError) throw error;
      throw new JsonlAuditStoreError(
        `audit store ${path} cannot be opened for writing (${(error as Error).message})`,
      );
    }
  }

  /**
   * Finds the chain head: the last whole line. An unfinished last line (a write cut off by
   * the machine stopping) was never acknowledged, so no response depended on it: it is cut
   * off and logged.
   */
  private recoverTail(size: number, log: StoreLog | undefined): void {
    const fd = this.fd as number;
    const lastNewline = newlineBefore(fd, size);
    const end = lastNewline + 1;
    if (end !== size) {
      ftruncateSync(fd, end);
      log?.(
        'warn',
        { store: 'audit', path: this.path, bytes: size - end },
        'the audit file ended in an unfinished line (never acknowledged); it was cut off',
      );
    }
    this.size = end;
    if (end === 0) return;
    const from = newlineBefore(fd, lastNewline) + 1;
    const line = new Uint8Array(lastNewline - from);
    readSync(fd, line, 0, line.length, from);
    const last = recordOf(new TextDecoder().decode(line));
    if (last === undefined) {
      throw new JsonlAuditStoreError(
        `the last line of audit store ${this.path} is not an audit record; run case-read audit verify --audit-store jsonl:${this.path}`,
      );
    }
    this.seq = last.seq;
    this.headHash = last.hash;
  }

  /**
   * Reads where the tree file stands: a hash cut off mid-write is cut off again, and the
   * records written since it last grew are found (the file's lines after its size).
   */
  private openTree(): void {
    const file = treePathOf(this.path);
    const { size, bytes, length } = treeFileSize(file);
    if (size > this.seq) {
      throw new JsonlAuditStoreError(
        `the tree file ${file} covers ${size} records but the trail holds ${this.seq}: records were removed; run case-read audit verify --audit-store jsonl:${this.path}`,
      );
    }
    if (length > bytes) truncateSync(file, bytes);
    this.tip = tree.tipFrom(size, hashesOfFile(file, frontierIndexes(size)));
    if (size === this.seq) return;
    const fd = this.fd as number;
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(256 * 1024);
    let rest = '';
    let line = 0;
    let position = 0;
    while (position < this.size) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, this.size - position), position);
      if (read === 0) break;
      position += read;
      const text = rest + decoder.decode(buffer.subarray(0, read), { stream: true });
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        line++;
        if (line > size) {
          const record = recordOf(text.slice(start, end));
          if (record === undefined || record.seq !== line) {
            throw new JsonlAuditStoreError(
              `line ${line} of audit store ${this.path} is not record ${line}; run case-read audit verify --audit-store jsonl:${this.path}`,
            );
          }
          this.pendingLeaves.push(Buffer.from(tree.leafOf(record)).toString('hex'));
        }
        start = end + 1;
      }
      rest = text.slice(start);
    }
  }

  append(record: AuditRecord, deadline?: Deadline): Promise<void> {
    if (this.fd === undefined) {
      return Promise.reject(new JsonlAuditStoreError(`audit store ${this.path} was opened to be read`));
    }
    return this.commits.append(record, deadline);
  }

  flush(): Promise<void> {
    return this.commits.drain();
  }

  /** The last record written: this writer is the only one, so what it wrote is the head. */
  async head(): Promise<ChainHead> {
    this.requireWriter();
    return { seq: this.seq, hash: this.headHash };
  }

  /**
   * Appends the checkpoint's line to `PATH.checkpoints`; a line that cannot be written whole
   * is cut off again. The newest checkpoint given again (a retry) is not written twice.
   */
  async saveCheckpoint(checkpoint: AuditCheckpoint): Promise<void> {
    this.requireWriter();
    const held = await this.heldCheckpoints();
    if (held.signatures.has(checkpointIdOf(checkpoint))) return;
    const file = checkpointPathOf(this.path);
    const before = existsSync(file) ? statSync(file).size : 0;
    try {
      appendFileSync(file, `${JSON.stringify(checkpoint)}\n`, { mode: 0o600 });
    } catch (error) {
      try {
        if (existsSync(file)) truncateSync(file, before);
      } catch {
        // The next line is written after whatever is left; the reader names a bad line.
      }
      throw error;
    }
    hold(held, checkpoint);
  }

  async newestCheckpoint(options?: { readonly withNote?: boolean }): Promise<AuditCheckpoint | undefined> {
    const held = await this.heldCheckpoints();
    return options?.withNote ? held.newestNoted : held.newest;
  }

  private async heldCheckpoints(): Promise<HeldCheckpoints> {
    if (this.held === undefined) {
      const held: HeldCheckpoints = { newest: undefined, newestNoted: undefined, signatures: new Set() };
      for await (const c of this.checkpoints()) if (!('invalid' in c)) hold(held, c);
      this.held = held;
    }
    return this.held;
  }

  /** The checkpoint file's lines, in the order written (which is seq order: one writer). */
  async *checkpoints(): AsyncGenerator<AuditCheckpoint | { readonly invalid: string }> {
    const file = checkpointPathOf(this.path);
    if (!existsSync(file)) return;
    for await (const { line, number } of linesOf(file)) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        yield { invalid: `line ${number} of ${file} is not JSON` };
        continue;
      }
      const read = checkpointOf(value);
      yield 'invalid' in read ? { invalid: `line ${number} of ${file}: ${read.invalid}` } : read;
    }
  }

  /**
   * Grows the tree over the records written since it last grew: their hashes go to the end
   * of the tree file in one write (cut off again if it fails: the records stay pending).
   */
  async growTree(): Promise<TreeHead> {
    this.requireWriter();
    await this.commits.drain();
    const leaves = this.pendingLeaves;
    if (leaves.length > 0) {
      const file = treePathOf(this.path);
      const { stored, frontier } = appendLeaves(
        sha256Bytes,
        this.tip.size,
        this.tip.frontier,
        leaves.map((hex) => Buffer.from(hex, 'hex')),
      );
      const before = treeFileSize(file).bytes;
      try {
        appendFileSync(file, Buffer.concat(stored), { mode: 0o600 });
      } catch (error) {
        try {
          if (existsSync(file)) truncateSync(file, before);
        } catch {
          // The next open cuts off what is not whole; a whole hash left over is found by verify.
        }
        throw error;
      }
      this.tip = { size: this.tip.size + leaves.length, frontier };
      this.pendingLeaves = this.pendingLeaves.slice(leaves.length);
    }
    return tree.treeHeadOf(this.tip, { seq: this.seq, hash: this.headHash });
  }

  async treeSize(): Promise<number> {
    return this.fd === undefined ? treeFileSize(treePathOf(this.path)).size : this.tip.size;
  }

  async treeHashes(indexes: readonly number[]): Promise<Map<number, Hash>> {
    return hashesOfFile(treePathOf(this.path), indexes);
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

  private requireWriter(): void {
    if (this.fd === undefined) {
      throw new JsonlAuditStoreError(`audit store ${this.path} was opened to be read`);
    }
  }

  private write(records: readonly AuditRecord[]): void {
    const fd = this.fd as number;
    this.checkStillTheFile();
    if (this.damaged) {
      ftruncateSync(fd, this.size);
      this.damaged = false;
    }
    let seq = this.seq;
    let head = this.headHash;
    let text = '';
    const hashes: string[] = [];
    for (const record of records) {
      seq++;
      const texts = auditFieldTexts(record);
      const hash = chainHashOf(
        sha256Hex,
        canonicalAuditText(record, seq, head, texts),
        CURRENT_AUDIT_VERSION,
      );
      text += lineOf(texts, seq, head, hash);
      head = hash;
      hashes.push(hash);
    }
    const length = Buffer.byteLength(text, 'utf8');
    let written = 0;
    try {
      written = this.writeText(fd, text);
      if (written !== length) throw new Error(`short write: ${written} of ${length} bytes`);
    } catch (error) {
      // Whatever part of the batch reached the file is cut off again; if even that fails,
      // the next batch tries before it writes.
      try {
        ftruncateSync(fd, this.size);
      } catch {
        this.damaged = true;
      }
      throw error;
    }
    this.size += length;
    this.seq = seq;
    this.headHash = head;
    for (const hash of hashes) this.pendingLeaves.push(hash);
  }

  /** A file moved or removed while open would take records nobody can find: refuse instead. */
  private checkStillTheFile(): void {
    let now: { dev: number; ino: number };
    try {
      now = statSync(this.path);
    } catch {
      now = { dev: -1, ino: -1 };
    }
    if (now.dev !== this.identity?.dev || now.ino !== this.identity.ino) {
      throw new JsonlAuditStoreError(
        `audit store ${this.path} was moved or removed while open; restart the service to start a new file`,
      );
    }
  }

  private async *records(): AsyncGenerator<StoredAuditRecord | { unreadable: number }> {
    for await (const { line, number } of linesOf(this.path)) {
      yield recordOf(line) ?? { unreadable: number };
    }
  }

  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    const limit = filter.limit ?? 1000;
    const found: StoredAuditRecord[] = [];
    if (limit <= 0) return found;
    for await (const record of this.records()) {
      if ('unreadable' in record || !matchesAuditQuery(record, filter)) continue;
      found.push(record);
      if (found.length >= limit) break;
    }
    return found;
  }

  /** Nothing is ever let go of here: the file keeps every record. */
  readonly archives = false;

  async archivedHead(): Promise<ChainHead> {
    return { seq: 0, hash: GENESIS_HASH };
  }

  /** The JSONL file is one append-only file: it does not archive (decisions §15). */
  async forget(_upTo: number): Promise<Forgotten> {
    throw new JsonlAuditStoreError(
      'the JSONL audit store does not archive: its file keeps every record; a trail kept for years belongs in SQLite or PostgreSQL (AUDIT_STORE=sqlite:PATH or postgres://…), which archive',
    );
  }

  /** Walks the whole file in order, holding one record at a time. */
  async verify(checkpoints?: CheckpointSet): Promise<AuditVerification> {
    const walker = new AuditChainWalker(sha256Hex, checkpoints, sha256Bytes);
    let checked = 0;
    let lastSeq = 0;
    for await (const record of this.records()) {
      if ('unreadable' in record) {
        return {
          ok: false,
          records: checked + 1,
          brokenAt: lastSeq + 1,
          reason: `line ${record.unreadable} is not an audit record: it was changed`,
        };
      }
      checked++;
      if (!walker.next(record)) return walker.result();
      lastSeq = record.seq;
      // Let the event loop breathe now and then.
      if (checked % VERIFY_BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return walker.result();
  }

  /** For readiness: the file at the path is still the one being written, and nothing is left damaged. */
  async ping(): Promise<void> {
    if (this.fd === undefined) return;
    this.checkStillTheFile();
    if (this.damaged) {
      ftruncateSync(this.fd, this.size);
      this.damaged = false;
    }
  }

  /** Writes anything still pending, then closes and gives up the writer lock. */
  close(): void {
    this.commits.flushNow();
    if (this.fd !== undefined) closeSync(this.fd);
    this.lock?.release();
  }
}
