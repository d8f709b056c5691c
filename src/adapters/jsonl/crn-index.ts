/**
 * The JSONL audit file's index by crn (decisions §22): where each crn's lines are (seq, byte
 * offset, length), so a subject access request reads that crn's lines and no other. The file
 * keeps no index of its own: this one is built in memory by one read of the file the first time
 * it is asked, then caught up from where it stopped with what was appended since (by this
 * process or another), after checking that the last line it indexed is still there, the same
 * record (its seq and chain hash, which covers every record before it); when it is not (the
 * file was cut back or replaced) the index is built again. Every line read back must be the
 * record the index says (its seq and its crn), or the read is refused: a file changed under it
 * is never answered short.
 */
import { type FileHandle, open } from 'node:fs/promises';
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import type { TimeWindow } from '../../ports/audit-log.js';
import { JsonlAuditStoreError, recordOf } from './audit-format.js';

const NEWLINE = 0x0a;
/** Bytes read at a time while indexing (more for a longer line). */
const CHUNK = 1024 * 1024;
/** Records per batch given. */
const BATCH = 1000;

/** The last line indexed: where it is, and the record it held. */
interface Anchor {
  readonly offset: number;
  readonly length: number;
  readonly seq: number;
  readonly hash: string;
}

export class JsonlCrnIndex {
  /** Per crn, its lines' places in seq order, as flat triples (seq, offset, length): compact. */
  private places = new Map<string, number[]>();
  /** The end of the last whole line indexed. */
  private indexed = 0;
  private lines = 0;
  private anchor: Anchor | undefined;
  /** Catch-ups run one at a time: two at once would index the same lines twice. */
  private catching: Promise<void> = Promise.resolve();

  /**
   * `end`: how much of the file holds acknowledged records, when this process is its writer
   * (its lines past that are a batch still being written, or being cut off); undefined: the
   * file's size, its last line only if whole.
   */
  constructor(
    private readonly path: string,
    private readonly end: () => number | undefined = () => undefined,
  ) {}

  /** The records naming `crn` in `window`, in seq order, a batch at a time, each read back by its place. */
  async *recordsNaming(crn: string, window: TimeWindow = {}): AsyncGenerator<readonly StoredAuditRecord[]> {
    await this.caughtUp();
    const places = this.places.get(crn);
    if (places === undefined) return;
    // Lines indexed after this point are not part of this answer.
    const count = places.length;
    const handle = await open(this.path, 'r');
    try {
      let batch: StoredAuditRecord[] = [];
      for (let i = 0; i < count; i += 3) {
        const [seq, offset, length] = places.slice(i, i + 3) as [number, number, number];
        const bytes = new Uint8Array(length);
        const { bytesRead } = await handle.read(bytes, 0, length, offset);
        const record = bytesRead === length ? recordOf(new TextDecoder().decode(bytes)) : undefined;
        if (record?.seq !== seq || record.crn !== crn) {
          throw new JsonlAuditStoreError(
            `audit record ${seq} of audit store ${this.path} is not where it was: the file was changed`,
          );
        }
        const time = record.at.getTime();
        if (window.from !== undefined && time < window.from.getTime()) continue;
        if (window.to !== undefined && time >= window.to.getTime()) continue;
        batch.push(record);
        if (batch.length === BATCH) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      await handle.close();
    }
  }

  private caughtUp(): Promise<void> {
    const done = this.catching.then(() => this.catchUp());
    this.catching = done.catch(() => {});
    return done;
  }

  /** Indexes the whole lines appended since the last call (all of the file the first time, or when it changed). */
  private async catchUp(): Promise<void> {
    const handle = await open(this.path, 'r');
    try {
      const size = Math.min((await handle.stat()).size, this.end() ?? Number.POSITIVE_INFINITY);
      if (!(await this.anchorHolds(handle, size))) {
        this.places = new Map();
        this.indexed = 0;
        this.lines = 0;
        this.anchor = undefined;
      }
      const decoder = new TextDecoder();
      let chunk = CHUNK;
      while (this.indexed < size) {
        const base = this.indexed;
        const want = Math.min(chunk, size - base);
        const buffer = new Uint8Array(want);
        const bytes = buffer.subarray(0, (await handle.read(buffer, 0, want, base)).bytesRead);
        let start = 0;
        for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
          this.index(decoder.decode(bytes.subarray(start, end)), base + start, end - start);
          start = end + 1;
        }
        // No whole line: the file ends in an unfinished one (not yet indexed), or the line is longer.
        if (start === 0 && (bytes.length < want || want === size - base)) return;
        chunk = start === 0 ? chunk * 2 : CHUNK;
      }
    } finally {
      await handle.close();
    }
  }

  /** Adds one line's place; a line that is not a record refuses (a record could be hidden in it). */
  private index(line: string, offset: number, length: number): void {
    const record = recordOf(line);
    if (record === undefined) {
      throw new JsonlAuditStoreError(
        `line ${this.lines + 1} of audit store ${this.path} is not an audit record: it was changed`,
      );
    }
    if (record.crn !== null) {
      const held = this.places.get(record.crn);
      if (held === undefined) this.places.set(record.crn, [record.seq, offset, length]);
      else held.push(record.seq, offset, length);
    }
    this.lines++;
    this.indexed = offset + length + 1;
    this.anchor = { offset, length, seq: record.seq, hash: record.hash };
  }

  /** Whether the last line indexed is still where it was, whole, the same record: what was indexed still holds. */
  private async anchorHolds(handle: FileHandle, size: number): Promise<boolean> {
    const anchor = this.anchor;
    if (anchor === undefined) return true;
    if (size < this.indexed) return false;
    const bytes = new Uint8Array(anchor.length + 1);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, anchor.offset);
    if (bytesRead !== bytes.length || bytes[anchor.length] !== NEWLINE) return false;
    const record = recordOf(new TextDecoder().decode(bytes.subarray(0, anchor.length)));
    return record?.seq === anchor.seq && record.hash === anchor.hash;
  }
}
