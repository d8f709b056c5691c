import { existsSync } from 'node:fs';
import {
  type AuditCheckpoint,
  checkpointIdOf,
  checkpointOf,
  cosignaturesOf,
  mergeCosignatures,
} from '../../domain/audit/checkpoint.js';
import { witnessSizeProblem } from '../shared/audit-witnesses.js';
import { appendWholeLine, linesOf } from './audit-format.js';

/**
 * The witness file beside the trail (decisions §19): `PATH.witnesses`, one JSON line per
 * event, appended by the trail's one writer, never changed. The checkpoint file keeps the
 * format its readers have always read; what the witnesses gave is kept here instead:
 *
 * - `{"cosigned":"KEYID SIGNATURE","lines":["— NAME BASE64", …]}`: cosignature lines kept
 *   with the checkpoint of that key id and signature (its `checkpointIdOf`), only those it
 *   did not hold yet; a checkpoint's cosignatures are every such line, in the file's order;
 * - `{"witness":"VKEY","size":N,"at":"ISO 8601"}`: the witness of that vkey line holds the
 *   tree of N records; the last such line for a vkey is its size.
 */
export const witnessPathOf = (path: string) => `${path}.witnesses`;

/** What the witness file says, read whole: memory grows with the cosigned checkpoints and witnesses. */
export interface WitnessFile {
  /** Each cosigned checkpoint's lines, by its id, and the file's line that first named it. */
  readonly cosigned: Map<string, { lines: readonly string[]; readonly line: number }>;
  /** Each witness's size, by its vkey line. */
  readonly sizes: Map<string, number>;
  /** The lines that are not a well-formed event, each named with its number. */
  readonly invalid: string[];
}

/** A checkpoint id as `checkpointIdOf` makes it: a key id and a base64url signature (as checkpointOf checks them). */
const CHECKPOINT_ID = /^[A-Za-z0-9_-]{1,128} [A-Za-z0-9_-]{1,256}$/;

/** Reads the witness file (none: no events); an unfinished last line is not one. */
export async function readWitnessFile(file: string): Promise<WitnessFile> {
  const read: WitnessFile = { cosigned: new Map(), sizes: new Map(), invalid: [] };
  if (!existsSync(file)) return read;
  for await (const { line, number } of linesOf(file)) {
    const problem = addEvent(read, line, number);
    if (problem !== undefined) read.invalid.push(`line ${number} of ${file}: ${problem}`);
  }
  return read;
}

/** Adds one line's event to what was read; what is wrong with it, if anything. */
function addEvent(read: WitnessFile, line: string, number: number): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  if (typeof value !== 'object' || value === null) return 'not an event';
  const v = value as Record<string, unknown>;
  if ('cosigned' in v) {
    if (typeof v.cosigned !== 'string' || !CHECKPOINT_ID.test(v.cosigned))
      return 'cosigned is not a checkpoint id (KEYID SIGNATURE)';
    const lines = cosignaturesOf(v.lines);
    if ('invalid' in lines) return lines.invalid;
    const held = read.cosigned.get(v.cosigned);
    const merged = mergeCosignatures(held?.lines, lines);
    if ('invalid' in merged) return merged.invalid;
    if (held === undefined) read.cosigned.set(v.cosigned, { lines: merged.lines, line: number });
    else held.lines = merged.lines;
    return undefined;
  }
  if ('witness' in v) {
    const problem = witnessSizeProblem(v.witness, v.size);
    if (problem !== undefined) return problem;
    read.sizes.set(v.witness as string, v.size as number);
    return undefined;
  }
  return 'neither a cosigned checkpoint nor a witness size';
}

/** The line of cosignatures added to a checkpoint (only the ones it did not hold). */
export function appendCosigned(file: string, checkpoint: AuditCheckpoint, lines: readonly string[]): void {
  appendWholeLine(file, JSON.stringify({ cosigned: checkpointIdOf(checkpoint), lines }));
}

/** The line of a witness's size, and when it was learned. */
export function appendWitnessSize(file: string, vkey: string, size: number, at: Date): void {
  appendWholeLine(file, JSON.stringify({ witness: vkey, size, at: at.toISOString() }));
}

/**
 * The checkpoint with the cosignatures the witness file holds for it (after any its own line
 * carries), or what is wrong with them (checked as any checkpoint's are).
 */
export function withCosignatures(
  checkpoint: AuditCheckpoint,
  read: WitnessFile,
): AuditCheckpoint | { readonly invalid: string } {
  const held = read.cosigned.get(checkpointIdOf(checkpoint));
  if (held === undefined) return checkpoint;
  const merged = mergeCosignatures(checkpoint.cosignatures, held.lines);
  if ('invalid' in merged) return merged;
  return checkpointOf({ ...checkpoint, cosignatures: merged.lines });
}
