/**
 * The JSONL audit file's index by crn (decisions §22): where each crn's lines are (seq, byte
 * offset, length), so a subject access request reads that crn's lines and no other. The file
 * keeps no index of its own: this one is built in memory by one read of the file the first time
 * it is asked, then caught up from where it stopped with what was appended since (by this
 * process or another). Every line read back must be the record the index says (its seq and its
 * crn), or the read is refused: a file changed under it is never answered short.
 */
import { open } from 'node:fs/promises';
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import type { TimeWindow } from '../../ports/audit-log.js';
import { JsonlAuditStoreError, recordOf } from './audit-format.js';

interface Place {
  readonly seq: number;
  readonly offset: number;
  readonly length: number;
}

const NEWLINE = 0x0a;
const CHUNK = 1024 * 1024;
const BATCH = 1000;

export class JsonlCrnIndex {
  private readonly places = new Map<string, Place[]>();
  /** The bytes read so far: up to the end of the last whole line. */
  private indexedBytes = 0;
  private lines = 0;

  constructor(private readonly path: string) {}

  /** Reads what was appended since the last call (all of the file the first time). */
  private async catchUp(): Promise<void> {
    const handle = await open(this.path, 'r');
    try {
      const { size } = await handle.stat();
      if (size < this.indexedBytes) {
        // The file is shorter than what was read (a torn last line cut off at open): read it anew.
        this.places.clear();
        this.indexedBytes = 0;
        this.lines = 0;
      }
      const decoder = new TextDecoder();
      let carry = new Uint8Array(0);
      let position = this.indexedBytes;
      while (position < size) {
        const chunk = new Uint8Array(Math.min(CHUNK, size - position));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        const bytes =
          carry.length === 0 ? chunk.subarray(0, bytesRead) : concat(carry, chunk.subarray(0, bytesRead));
        let start = 0;
        for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
          this.lines++;
          const offset = this.indexedBytes + start;
          const record = recordOf(decoder.decode(bytes.subarray(start, end)));
          if (record === undefined) {
            throw new JsonlAuditStoreError(
              `line ${this.lines} of audit store ${this.path} is not an audit record: it was changed`,
            );
          }
          if (record.crn !== null) {
            const held = this.places.get(record.crn) ?? [];
            held.push({ seq: record.seq, offset, length: end - start });
            this.places.set(record.crn, held);
          }
          start = end + 1;
        }
        this.indexedBytes += start;
        carry = bytes.slice(start);
      }
    } finally {
      await handle.close();
    }
  }

  /** The records naming `crn` in `window`, in seq order, a batch at a time, each read back by its place. */
  async *recordsNaming(crn: string, window: TimeWindow): AsyncGenerator<readonly StoredAuditRecord[]> {
    await this.catchUp();
    const places = [...(this.places.get(crn) ?? [])];
    if (places.length === 0) return;
    const handle = await open(this.path, 'r');
    try {
      let batch: StoredAuditRecord[] = [];
      for (const place of places) {
        const bytes = new Uint8Array(place.length);
        const { bytesRead } = await handle.read(bytes, 0, place.length, place.offset);
        const record = bytesRead === place.length ? recordOf(new TextDecoder().decode(bytes)) : undefined;
        if (record?.seq !== place.seq || record.crn !== crn) {
          throw new JsonlAuditStoreError(
            `audit record ${place.seq} of audit store ${this.path} is not where it was: the file was changed`,
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
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
