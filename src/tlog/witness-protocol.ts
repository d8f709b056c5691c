/**
 * The bodies of C2SP tlog-witness's add-checkpoint call (decisions §19), for both sides: the
 * log that asks a witness to cosign and the witness this project ships.
 *
 * - The request: `old SIZE\n`, up to 63 consistency proof lines (one base64 hash each), an
 *   empty line, then the signed checkpoint note.
 * - A 200 answer: one or more cosignature lines, `— NAME BASE64\n` each.
 * - A 409 answer (`text/x.tlog.size`): the size the witness last cosigned, `SIZE\n`.
 */
import type { Hash } from './merkle.js';
import { hashFromBase64, hashToBase64, signatureLineParts } from './note.js';

/** The most consistency proof lines a request may carry. */
export const MAX_PROOF_LINES = 63;

/** The content type of a 409 answer, whose body is the size the witness holds. */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';

/** The most cosignature lines read from one answer (as many as a note may carry signatures). */
const MAX_COSIGNATURE_LINES = 100;

/** A body this side was asked to write that the protocol cannot carry. */
export class WitnessProtocolError extends Error {
  override readonly name = 'WitnessProtocolError';
}

/** A tree size in decimal, no leading zero, within what a number holds exactly. */
const SIZE = /^(0|[1-9][0-9]{0,15})$/;
const parseSize = (text: string): number | undefined =>
  SIZE.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined;

const isSize = (size: number): boolean => Number.isSafeInteger(size) && size >= 0;

/** The add-checkpoint request body: the old size, the consistency proof from it, and the signed checkpoint note. */
export function addCheckpointBody(oldSize: number, proof: readonly Hash[], note: string): string {
  if (!isSize(oldSize)) throw new WitnessProtocolError(`${oldSize} is not a tree size`);
  if (proof.length > MAX_PROOF_LINES)
    throw new WitnessProtocolError(
      `a consistency proof of ${proof.length} hashes is more than ${MAX_PROOF_LINES}`,
    );
  if (proof.some((hash) => hash.length !== 32)) throw new WitnessProtocolError('a proof hash is 32 bytes');
  if (!note.endsWith('\n')) throw new WitnessProtocolError('a signed note ends with a newline');
  // The empty line before the note is the body's first: a note that began with one would be
  // read as starting after it (and refused).
  if (note.startsWith('\n')) throw new WitnessProtocolError('a checkpoint note begins with its origin line');
  return `old ${oldSize}\n${proof.map((hash) => `${hashToBase64(hash)}\n`).join('')}\n${note}`;
}

/**
 * An add-checkpoint request body read, or what is wrong with it (a 400 answer): the old size,
 * the proof hashes, and the note as sent (unopened: its signatures and body are the witness's
 * to check).
 */
export function parseAddCheckpointBody(
  text: string,
):
  | { readonly old: number; readonly proof: readonly Hash[]; readonly note: string }
  | { readonly invalid: string } {
  if (!text.endsWith('\n')) return { invalid: 'the body does not end with a newline' };
  const blank = text.indexOf('\n\n');
  if (blank < 0) return { invalid: 'the body has no empty line before the checkpoint' };
  const [first = '', ...proofLines] = text.slice(0, blank).split('\n');
  const note = text.slice(blank + 2);
  const old = first.startsWith('old ') ? parseSize(first.slice(4)) : undefined;
  if (old === undefined) return { invalid: 'the first line is not "old SIZE" (decimal, no leading zero)' };
  if (proofLines.length > MAX_PROOF_LINES)
    return { invalid: `the proof has ${proofLines.length} lines, more than ${MAX_PROOF_LINES}` };
  const proof: Hash[] = [];
  for (const [index, line] of proofLines.entries()) {
    const hash = hashFromBase64(line);
    if (hash === undefined) return { invalid: `proof line ${index + 1} is not a base64 32-byte hash` };
    proof.push(hash);
  }
  if (note.length === 0 || note.startsWith('\n'))
    return { invalid: 'the body has no checkpoint after the empty line' };
  return { old, proof, note };
}

/** A 409 answer's body: the size the witness holds, `N\n`. */
export function tlogSizeBody(size: number): string {
  if (!isSize(size)) throw new WitnessProtocolError(`${size} is not a tree size`);
  return `${size}\n`;
}

/** The size a 409 answer's body holds (`N\n`), or undefined when it is not one. */
export function parseTlogSize(body: string): number | undefined {
  return body.endsWith('\n') ? parseSize(body.slice(0, -1)) : undefined;
}

/**
 * A 200 answer's body read: one or more `— NAME BASE64` lines, each ending in a newline; the
 * lines without their newline, or what is wrong with the body. Which of them are cosignatures
 * by keys the reader trusts is the reader's to check (open the note with them).
 */
export function parseCosignatureLines(body: string): string[] | { readonly invalid: string } {
  if (body.length === 0) return { invalid: 'the answer holds no cosignature line' };
  if (!body.endsWith('\n')) return { invalid: 'the answer does not end with a newline' };
  const lines = body.slice(0, -1).split('\n');
  if (lines.length > MAX_COSIGNATURE_LINES)
    return { invalid: `the answer holds more than ${MAX_COSIGNATURE_LINES} lines` };
  for (const line of lines) {
    if (signatureLineParts(line) === undefined)
      return { invalid: `a line is not "— NAME BASE64": ${JSON.stringify(line.slice(0, 80))}` };
  }
  return lines;
}
