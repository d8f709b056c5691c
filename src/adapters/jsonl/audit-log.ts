import { closeSync, fstatSync, ftruncateSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { auditFieldTexts, canonicalAuditText } from '../../domain/audit/canonical-text.js';
import { GENESIS_HASH } from '../../domain/audit/chain.js';
import { AuditChainWalker, type AuditVerification } from '../../domain/audit/chain-walker.js';
import {
  type AuditCheckpoint,
  type ChainHead,
  type CheckpointSet,
  checkpointIdOf,
  describeCheckpoint,
  mergeCosignatures,
} from '../../domain/audit/checkpoint.js';
import {
  type AuditQuery,
  type AuditRecord,
  CURRENT_AUDIT_VERSION,
  chainHashOf,
  matchesAuditQuery,
  type StoredAuditRecord,
} from '../../domain/audit/record.js';
import type { AuditLog, Forgotten, TimeWindow, TreeHead } from '../../ports/audit-log.js';
import type { Deadline } from '../../ports/deadline.js';
import { StoreError, type StoreLog } from '../../ports/stores.js';
import type { Hash } from '../../tlog/merkle.js';
import { VERIFY_BATCH } from '../shared/audit-chain.js';
import { witnessSizeProblem } from '../shared/audit-witnesses.js';
import { GroupCommit } from '../shared/group-commit.js';
import { sha256Bytes, sha256Hex } from '../shared/sha256.js';
import {
  appendCheckpoint,
  checkpointPathOf,
  checkpointsOf,
  type HeldCheckpoints,
  hold,
} from './audit-checkpoints.js';
import {
  cutUnfinishedLine,
  JsonlAuditStoreError,
  lineOf,
  linesOf,
  newlineBefore,
  recordOf,
} from './audit-format.js';
import { hashesOfFile, treeFileSize, treePathOf, WrittenTree } from './audit-tree-file.js';
import {
  appendCosigned,
  appendWitnessSize,
  readWitnessFile,
  type WitnessFile,
  withCosignatures,
  witnessPathOf,
} from './audit-witnesses.js';
import { JsonlCrnIndex } from './crn-index.js';
import { WriterLock } from './writer-lock.js';

// The file's parts, each in a module of its own, named here as before.
export { checkpointPathOf } from './audit-checkpoints.js';
export { JsonlAuditStoreError } from './audit-format.js';
export { treePathOf } from './audit-tree-file.js';
export { witnessPathOf } from './audit-witnesses.js';

/** The one call that puts a batch in the file (bytes written); tests replace it to act out a full disk. */
export type WriteText = (fd: number, text: string) => number;

export interface JsonlAuditOptions {
  /** `write`: `serve` appends (the file is created if absent, one writer at a time). `read`: the audit commands. */
  readonly mode: 'write' | 'read';
  readonly log?: StoreLog;
  readonly writeText?: WriteText;
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
 * line each), the witnesses' cosignatures of them and each witness's size to
 * `PATH.witnesses` (audit-witnesses.ts), and the tree's stored hashes to `PATH.tree`
 * ({@link WrittenTree}), all written by the same writer.
 */
export class JsonlAuditLog implements AuditLog {
  private readonly commits = new GroupCommit<AuditRecord>((batch) => this.write(batch));
  /** The file's length up to the last whole record this writer knows of. */
  private size = 0;
  private readonly byCrn: JsonlCrnIndex;
  /** Set when a failed write could not be cut back: nothing is appended until it can. */
  private damaged = false;
  private seq = 0;
  private headHash = GENESIS_HASH;
  /**
   * The checkpoint file as this writer knows it, once read (it is the only writer): the
   * highest checkpoint, and every one's signature, so a checkpoint given twice is kept once.
   */
  private held: HeldCheckpoints | undefined;
  /** The tree as the writer grows it (none when read only). */
  private tree: WrittenTree | undefined;
  /** The witness file as this store knows it, once read (the writer keeps it as it appends). */
  private witnesses: WitnessFile | undefined;

  private constructor(
    private readonly path: string,
    private readonly fd: number | undefined,
    private readonly identity: { dev: number; ino: number } | undefined,
    private readonly lock: WriterLock | undefined,
    private readonly writeText: WriteText,
  ) {
    // The writer's index reaches only the records it has acknowledged (a failed batch is cut off).
    this.byCrn = new JsonlCrnIndex(path, () => (fd === undefined ? undefined : this.size));
  }

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
      log.tree = WrittenTree.open(path, fd, log.size, log.seq);
      const cut = cutUnfinishedLine(witnessPathOf(path));
      if (cut > 0) {
        options.log?.(
          'warn',
          { store: 'audit', path: witnessPathOf(path), bytes: cut },
          'the witness file ended in an unfinished line; it was cut off',
        );
      }
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
    if (!held.signatures.has(checkpointIdOf(checkpoint))) {
      appendCheckpoint(checkpointPathOf(this.path), checkpoint);
      const { cosignatures: _added, ...bare } = checkpoint;
      hold(held, bare);
    }
    if (checkpoint.cosignatures?.length) await this.addCosignatures(checkpoint, checkpoint.cosignatures);
  }

  /**
   * The newest checkpoint (with `withNote`, the newest that carries a note), with the
   * cosignatures the witness file holds for it; when those are not well formed, without them
   * (`checkpoints` names the line).
   */
  async newestCheckpoint(options?: { readonly withNote?: boolean }): Promise<AuditCheckpoint | undefined> {
    const held = await this.heldCheckpoints();
    const newest = options?.withNote ? held.newestNoted : held.newest;
    if (newest === undefined) return undefined;
    const read = withCosignatures(newest, await this.witnessFile());
    return 'invalid' in read ? newest : read;
  }

  /**
   * Appends the lines the checkpoint does not hold yet to `PATH.witnesses`, in one line (cut
   * off again if it cannot be written whole). The checkpoint must be in the checkpoint file.
   */
  async addCosignatures(checkpoint: AuditCheckpoint, lines: readonly string[]): Promise<void> {
    this.requireWriter();
    const id = checkpointIdOf(checkpoint);
    if (!(await this.heldCheckpoints()).signatures.has(id)) {
      throw new JsonlAuditStoreError(
        `cannot add cosignatures to the ${describeCheckpoint(checkpoint)}: it is not stored in ${checkpointPathOf(this.path)}`,
      );
    }
    const file = await this.witnessFile();
    const held = file.cosigned.get(id);
    const merged = mergeCosignatures(held?.lines, lines);
    if ('invalid' in merged) {
      throw new JsonlAuditStoreError(
        `cannot add cosignatures to the ${describeCheckpoint(checkpoint)}: ${merged.invalid}`,
      );
    }
    if (merged.fresh.length === 0) return;
    appendCosigned(witnessPathOf(this.path), checkpoint, merged.fresh);
    if (held === undefined) file.cosigned.set(id, { lines: merged.lines, line: 0 });
    else held.lines = merged.lines;
  }

  async witnessSizes(): Promise<ReadonlyMap<string, number>> {
    return new Map((await this.witnessFile()).sizes);
  }

  /** Appends the witness's size to `PATH.witnesses`, unless it is the size already recorded. */
  async saveWitnessSize(vkey: string, size: number): Promise<void> {
    this.requireWriter();
    const problem = witnessSizeProblem(vkey, size);
    if (problem !== undefined) throw new JsonlAuditStoreError(problem);
    const file = await this.witnessFile();
    if (file.sizes.get(vkey) === size) return;
    appendWitnessSize(witnessPathOf(this.path), vkey, size, new Date());
    file.sizes.set(vkey, size);
  }

  private async witnessFile(): Promise<WitnessFile> {
    this.witnesses ??= await readWitnessFile(witnessPathOf(this.path));
    return this.witnesses;
  }

  private async heldCheckpoints(): Promise<HeldCheckpoints> {
    if (this.held === undefined) {
      const held: HeldCheckpoints = { newest: undefined, newestNoted: undefined, signatures: new Set() };
      for await (const c of checkpointsOf(checkpointPathOf(this.path))) if (!('invalid' in c)) hold(held, c);
      this.held = held;
    }
    return this.held;
  }

  /**
   * The checkpoint file's lines, in the order written (which is seq order: one writer), each
   * with its cosignatures from the witness file. That file is read first, so every checkpoint
   * it names is in the checkpoint file read after it; then, after the checkpoints, each of its
   * lines that is not a well-formed event, and each cosigning a checkpoint the checkpoint file
   * does not hold, comes as `{ invalid }`.
   */
  async *checkpoints(): AsyncGenerator<AuditCheckpoint | { readonly invalid: string }> {
    const file = witnessPathOf(this.path);
    const witnesses = await readWitnessFile(file);
    const found = new Set<string>();
    for await (const read of checkpointsOf(checkpointPathOf(this.path))) {
      if ('invalid' in read) {
        yield read;
        continue;
      }
      found.add(checkpointIdOf(read));
      const cosigned = withCosignatures(read, witnesses);
      yield 'invalid' in cosigned
        ? { invalid: `the cosignatures in ${file} of the ${describeCheckpoint(read)}: ${cosigned.invalid}` }
        : cosigned;
    }
    for (const invalid of witnesses.invalid) yield { invalid };
    for (const [id, { line }] of witnesses.cosigned) {
      if (!found.has(id))
        yield {
          invalid: `line ${line} of ${file} cosigns a checkpoint ${checkpointPathOf(this.path)} does not hold`,
        };
    }
  }

  /**
   * Grows the tree over the records written since it last grew ({@link WrittenTree.grow}):
   * their hashes go to the end of the tree file in one write (cut off again if it fails: the
   * records stay pending).
   */
  async growTree(): Promise<TreeHead> {
    this.requireWriter();
    await this.commits.drain();
    return (this.tree as WrittenTree).grow({ seq: this.seq, hash: this.headHash });
  }

  async treeSize(): Promise<number> {
    return this.tree?.size ?? treeFileSize(treePathOf(this.path)).size;
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
    this.tree?.add(hashes, { seq, hash: head });
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

  /** Through an index by crn held in memory, caught up with the file when asked (crn-index.ts). */
  recordsNaming(crn: string, window?: TimeWindow): AsyncIterable<readonly StoredAuditRecord[]> {
    return this.byCrn.recordsNaming(crn, window);
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

  /** Nothing is archived from here, so there is no archive lock: refused as {@link forget} is. */
  async lockArchive(_who: string): Promise<never> {
    return this.forget(0) as Promise<never>;
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
