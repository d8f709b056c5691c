/**
 * The JSONL audit store's index by crn (crn-index.ts), beyond the contract: a call reads the
 * crn's own lines and not the file; a line changed under it is refused; a file cut back and
 * written anew is indexed again; calls at once index each line once.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonlAuditLog } from '../../../src/adapters/jsonl/audit-log.js';
import type { AuditLog } from '../../../src/ports/audit-log.js';
import { auditRecord } from '../../contract/audit-log.contract.js';

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-jsonl-crn-'));
  path = join(dir, 'audit.jsonl');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes records `from` to `to` (crn X123456, but A000001 every third) and closes the writer. */
async function write(from: number, to: number, requestId = (i: number) => `req-${i}`): Promise<void> {
  const log = JsonlAuditLog.open(path, { mode: 'write' });
  for (let i = from; i <= to; i++) await log.append(auditRecord(i, { requestId: requestId(i) }));
  log.close();
}

const reader = () => JsonlAuditLog.open(path, { mode: 'read' });

async function seqsNaming(log: AuditLog, crn: string): Promise<number[]> {
  const seqs: number[] = [];
  for await (const batch of log.recordsNaming(crn)) seqs.push(...batch.map((r) => r.seq));
  return seqs;
}

/** Overwrites, in place, the first occurrence of `from` on record `seq`'s line with `to` (as long). */
function changeInPlace(seq: number, from: string, to: string): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  const index = lines.findIndex((line) => line !== '' && JSON.parse(line).seq === seq);
  const offset = lines.slice(0, index).reduce((sum, line) => sum + line.length + 1, 0);
  const at = (lines[index] as string).indexOf(from);
  expect(at).toBeGreaterThan(-1);
  expect(to.length).toBe(from.length);
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from(to), 0, to.length, offset + at);
  closeSync(fd);
}

describe('JSONL audit store: the index by crn', () => {
  it("reads only the crn's lines once indexed: another line made unreadable goes unread", async () => {
    await write(1, 9);
    const log = reader();
    expect(await seqsNaming(log, 'X123456')).toEqual([1, 2, 4, 5, 7, 8]);
    changeInPlace(3, '{', 'x');
    expect(await seqsNaming(log, 'X123456')).toEqual([1, 2, 4, 5, 7, 8]);
    // A store that read the file would find it: a new reader, building its index, refuses.
    await expect(seqsNaming(reader(), 'X123456')).rejects.toThrow(/line 3 .* is not an audit record/);
    expect(await log.verify()).toMatchObject({ ok: false, brokenAt: 3 });
  });

  it('refuses a line changed under it, never answering short', async () => {
    await write(1, 9);
    const log = reader();
    expect(await seqsNaming(log, 'X123456')).toEqual([1, 2, 4, 5, 7, 8]);
    changeInPlace(4, '"crn":"X123456"', '"crn":"Z123456"');
    await expect(seqsNaming(log, 'X123456')).rejects.toThrow(/record 4 .* is not where it was/);
    changeInPlace(4, '"crn":"Z123456"', '"crn":"X123456"');
    changeInPlace(5, '"seq":5', '"seq":6');
    await expect(seqsNaming(log, 'X123456')).rejects.toThrow(/record 5 .* is not where it was/);
  });

  it('indexes the file again when it was cut back and written anew, whatever its length', async () => {
    await write(1, 6);
    const log = reader();
    expect(await seqsNaming(log, 'X123456')).toEqual([1, 2, 4, 5]);
    // Cut back to three records, then three others appended where the last three were (longer ones).
    const three = readFileSync(path, 'utf8').split('\n').slice(0, 3).join('\n').length + 1;
    truncateSync(path, three);
    await write(4, 8, (i) => `request-${i}`);
    const again = await log.query({});
    expect(again.map((r) => r.requestId)).toEqual([
      'req-1',
      'req-2',
      'req-3',
      ...[4, 5, 6, 7, 8].map((i) => `request-${i}`),
    ]);
    expect(await seqsNaming(log, 'X123456')).toEqual([1, 2, 4, 5, 7, 8]);
    const read: string[] = [];
    for await (const batch of log.recordsNaming('X123456')) read.push(...batch.map((r) => r.requestId));
    expect(read).toEqual(['req-1', 'req-2', 'request-4', 'request-5', 'request-7', 'request-8']);
    // Cut back again, to fewer bytes than were indexed: found again too.
    truncateSync(path, three);
    expect(await seqsNaming(log, 'X123456')).toEqual([1, 2]);
  });

  it('indexes each line once when asked twice at once', async () => {
    await write(1, 30);
    const log = reader();
    const [one, two] = await Promise.all([seqsNaming(log, 'X123456'), seqsNaming(log, 'X123456')]);
    const expected = Array.from({ length: 30 }, (_, k) => k + 1).filter((i) => i % 3 !== 0);
    expect(one).toEqual(expected);
    expect(two).toEqual(expected);
    expect(await seqsNaming(log, 'X123456')).toEqual(expected);
  });
});
