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
} from 'node:fs';
import { open as openAsync } from 'node:fs/promises';
import type { AuditFieldTexts } from '../../domain/audit/canonical-text.js';
import {
  type AuditVersion,
  CONTINUATION_VERSION,
  CURRENT_AUDIT_VERSION,
  type StoredAuditRecord,
} from '../../domain/audit/record.js';
import { StoreError } from '../../ports/stores.js';

/**
 * The JSONL audit trail's file format: one record per line (a JSON object, its fields by
 * name), read forwards a line at a time or backwards from the end to find the last one.
 */

/** The store cannot be opened or used as asked; the message says what to do. */
export class JsonlAuditStoreError extends StoreError {
  override readonly name = 'JsonlAuditStoreError';
}

/** How far back from the end the last record is looked for at a time. */
const TAIL_CHUNK = 64 * 1024;

/**
 * The line of one stored record: its version, every field by name, then the two hashes. A line
 * without `version` is a version-1 record, written before; one without `issued` (version 1 or 2)
 * reads as null there. A trail's continuation record (format 5, ADR 30) has `"continuation"`
 * after `issued`; only it carries the field, so every other line is as it always was.
 */
export function lineOf(
  texts: AuditFieldTexts,
  seq: number,
  previousHash: string,
  hash: string,
  version: AuditVersion = CURRENT_AUDIT_VERSION,
): string {
  const continuation = version === CONTINUATION_VERSION ? `"continuation":${texts.continuation},` : '';
  return `{"version":${version},"seq":${seq},"at":${texts.at},"requestId":${texts.requestId},"clientId":${texts.clientId},"certificateSerial":${texts.certificateSerial},"onBehalfOf":${texts.onBehalfOf},"operation":${texts.operation},"crn":${texts.crn},"status":${texts.status},"problem":${texts.problem},"access":${texts.access},"issued":${texts.issued},${continuation}"previousHash":"${previousHash}","hash":"${hash}"}\n`;
}

/** A line read back, or undefined when it is not a whole audit record. */
export function recordOf(line: string): StoredAuditRecord | undefined {
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
    // Only a version-5 line carries a continuation, and it always does.
    (value.version === CONTINUATION_VERSION) !== (value.continuation !== undefined) ||
    (value.continuation !== undefined && !str('continuation')) ||
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
    ...(value.continuation === undefined ? {} : { continuation: value.continuation as string }),
    previousHash: value.previousHash as string,
    hash: value.hash as string,
  };
}

/** The position of the last newline before `before`, or -1: read backwards a chunk at a time. */
export function newlineBefore(fd: number, before: number): number {
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

/** Every complete line of the file, with its number, oldest first; an unfinished last line is not one. */
export async function* linesOf(path: string): AsyncGenerator<{ line: string; number: number }> {
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
 * Appends `line` and its newline to the file (made 0600 if absent); a line that cannot be
 * written whole is cut off again, so the file keeps only whole lines.
 */
export function appendWholeLine(file: string, line: string): void {
  const before = existsSync(file) ? statSync(file).size : 0;
  try {
    appendFileSync(file, `${line}\n`, { mode: 0o600 });
  } catch (error) {
    try {
      if (existsSync(file)) truncateSync(file, before);
    } catch {
      // The next line is written after whatever is left; the reader names a bad line.
    }
    throw error;
  }
}

/**
 * Cuts off the file's unfinished last line (a write cut short by the machine stopping), so the
 * next line is not written onto its end; how many bytes went (0 when the file ends whole or is absent).
 */
export function cutUnfinishedLine(file: string): number {
  if (!existsSync(file)) return 0;
  const fd = openSync(file, 'r+');
  try {
    const size = fstatSync(fd).size;
    const end = newlineBefore(fd, size) + 1;
    if (end !== size) ftruncateSync(fd, end);
    return size - end;
  } finally {
    closeSync(fd);
  }
}
