// The AuditLog port over a JSONL trail: each batch linked into the hash chain and handed to
// the trail's file (audit-file.ts), and the tree, checkpoints and reads over that file and the
// files beside it.
import { auditFieldTexts, canonicalAuditText } from '../../domain/audit/canonical-text.js';
import { GENESIS_HASH } from '../../domain/audit/chain.js';
import { AuditChainWalker, type AuditVerification } from '../../domain/audit/chain-walker.js';
import type { AuditCheckpoint, ChainHead, CheckpointSet } from '../../domain/audit/checkpoint.js';
import {
  type AuditQuery,
  type AuditRecord,
  chainHashOf,
  isContinuation,
  matchesAuditQuery,
  type StoredAuditRecord,
  versionToWrite,
} from '../../domain/audit/record.js';
import type { AuditLog, Forgotten, TimeWindow, TreeHead } from '../../ports/audit-log.js';
import type { Deadline } from '../../ports/deadline.js';
import type { Hash } from '../../tlog/merkle.js';
import { VERIFY_BATCH } from '../shared/audit-chain.js';
import { GroupCommit } from '../shared/group-commit.js';
import { sha256Bytes, sha256Hex } from '../shared/sha256.js';
import { CheckpointFiles } from './audit-checkpoint-files.js';
import { JsonlAuditFile, type JsonlAuditOptions, openingError } from './audit-file.js';
import { JsonlAuditStoreError, lineOf } from './audit-format.js';
import { hashesOfFile, treeFileSize, treePathOf, WrittenTree } from './audit-tree-file.js';

// The file's parts, each in a module of its own, named here as before.
export { checkpointPathOf } from './audit-checkpoints.js';
export type { JsonlAuditOptions, WriteText } from './audit-file.js';
export { JsonlAuditStoreError } from './audit-format.js';
export { treePathOf } from './audit-tree-file.js';
export { witnessPathOf } from './audit-witnesses.js';

/** A batch's lines, each record chained onto the one before it from `from`, and the hashes and head they end at. */
function linked(
  records: readonly AuditRecord[],
  from: ChainHead,
): { readonly text: string; readonly hashes: string[]; readonly head: ChainHead } {
  let seq = from.seq;
  let head = from.hash;
  let text = '';
  const hashes: string[] = [];
  for (const record of records) {
    seq++;
    const texts = auditFieldTexts(record);
    // Version 5 for a continuation (ADR 30), written with its field; every other line as ever.
    const version = versionToWrite(record);
    const hash = chainHashOf(sha256Hex, canonicalAuditText(record, seq, head, texts, version), version);
    text += lineOf(texts, seq, head, hash, version);
    head = hash;
    hashes.push(hash);
  }
  return { text, hashes, head: { seq, hash: head } };
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
 * file beside it (`PATH.lock`, holding the writer's pid) enforces ({@link JsonlAuditFile}).
 * Several instances need `sqlite:` (one machine) or `postgres://`. A write that fails (a full
 * disk) is cut back off the file, so a refused batch leaves no half line behind, and the chain
 * stays where it was.
 *
 * Signed checkpoints go to a file of their own beside it, `PATH.checkpoints` (one JSON
 * line each), the witnesses' cosignatures of them and each witness's size to
 * `PATH.witnesses` ({@link CheckpointFiles}), and the tree's stored hashes to `PATH.tree`
 * ({@link WrittenTree}), all written by the same writer.
 */
export class JsonlAuditLog implements AuditLog {
  private readonly commits = new GroupCommit<AuditRecord>((batch) => this.write(batch));
  private seq: number;
  private headHash: string;
  private readonly checkpointFiles: CheckpointFiles;
  /** The tree as the writer grows it (none when read only). */
  private tree: WrittenTree | undefined;

  private constructor(private readonly file: JsonlAuditFile) {
    this.seq = file.last?.seq ?? 0;
    this.headHash = file.last?.hash ?? GENESIS_HASH;
    this.checkpointFiles = new CheckpointFiles(file.path);
  }

  static open(path: string, options: JsonlAuditOptions): JsonlAuditLog {
    const file = JsonlAuditFile.open(path, options);
    const log = new JsonlAuditLog(file);
    if (file.fd === undefined) return log;
    try {
      log.tree = WrittenTree.open(path, file.fd, file.size, log.seq);
      log.checkpointFiles.cutUnfinished(options.log);
      return log;
    } catch (error) {
      file.close();
      throw openingError(path, error);
    }
  }

  private get path(): string {
    return this.file.path;
  }

  append(record: AuditRecord, deadline?: Deadline): Promise<void> {
    try {
      this.file.requireWriter();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.commits.append(record, deadline);
  }

  flush(): Promise<void> {
    return this.commits.drain();
  }

  /** The last record written: this writer is the only one, so what it wrote is the head. */
  async head(): Promise<ChainHead> {
    this.file.requireWriter();
    return { seq: this.seq, hash: this.headHash };
  }

  /** Kept in `PATH.checkpoints`, once ({@link CheckpointFiles.save}). */
  async saveCheckpoint(checkpoint: AuditCheckpoint): Promise<void> {
    this.file.requireWriter();
    await this.checkpointFiles.save(checkpoint);
  }

  newestCheckpoint(options?: { readonly withNote?: boolean }): Promise<AuditCheckpoint | undefined> {
    return this.checkpointFiles.newest(options);
  }

  /** Kept in `PATH.witnesses` ({@link CheckpointFiles.addCosignatures}). */
  async addCosignatures(checkpoint: AuditCheckpoint, lines: readonly string[]): Promise<void> {
    this.file.requireWriter();
    await this.checkpointFiles.addCosignatures(checkpoint, lines);
  }

  witnessSizes(): Promise<ReadonlyMap<string, number>> {
    return this.checkpointFiles.witnessSizes();
  }

  async saveWitnessSize(vkey: string, size: number): Promise<void> {
    this.file.requireWriter();
    await this.checkpointFiles.saveWitnessSize(vkey, size);
  }

  checkpoints(): AsyncGenerator<AuditCheckpoint | { readonly invalid: string }> {
    return this.checkpointFiles.checkpoints();
  }

  /**
   * Grows the tree over the records written since it last grew ({@link WrittenTree.grow}):
   * their hashes go to the end of the tree file in one write (cut off again if it fails: the
   * records stay pending).
   */
  async growTree(): Promise<TreeHead> {
    this.file.requireWriter();
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
  recordsFrom(from: number, limit?: number): AsyncGenerator<readonly StoredAuditRecord[]> {
    return this.file.recordsFrom(from, limit);
  }

  /** The batch, chained onto the head, goes to the file in one write; the head moves only once it is there. */
  private write(records: readonly AuditRecord[]): void {
    const { hashes, head } = this.file.append(() => linked(records, { seq: this.seq, hash: this.headHash }));
    this.seq = head.seq;
    this.headHash = head.hash;
    this.tree?.add(hashes, head);
  }

  /** Through an index by crn held in memory, caught up with the file when asked (crn-index.ts). */
  recordsNaming(crn: string, window?: TimeWindow): AsyncIterable<readonly StoredAuditRecord[]> {
    return this.file.recordsNaming(crn, window);
  }

  /**
   * Read by one scan of the whole file (the small, development store; a line's bytes are not
   * what its hash covers, so no look at the text short of parsing it could be trusted to find
   * every one). A line that is not a record refuses, naming it: one could be hidden in it.
   */
  async continuations(): Promise<readonly StoredAuditRecord[]> {
    const found: StoredAuditRecord[] = [];
    for await (const record of this.file.records()) {
      if ('unreadable' in record) {
        throw new JsonlAuditStoreError(
          `line ${record.unreadable} of audit store ${this.path} is not an audit record: it was changed`,
        );
      }
      if (isContinuation(record)) found.push(record);
    }
    return found;
  }

  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    const limit = filter.limit ?? 1000;
    const found: StoredAuditRecord[] = [];
    if (limit <= 0) return found;
    for await (const record of this.file.records()) {
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
    for await (const record of this.file.records()) {
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
    this.file.ping();
  }

  /** Writes anything still pending, then closes and gives up the writer lock. */
  close(): void {
    this.commits.flushNow();
    this.file.close();
  }
}
