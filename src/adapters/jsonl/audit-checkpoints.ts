import { existsSync } from 'node:fs';
import { type AuditCheckpoint, checkpointIdOf, checkpointOf } from '../../domain/audit/checkpoint.js';
import { appendWholeLine, linesOf } from './audit-format.js';

/** The checkpoint file beside the trail: `PATH.checkpoints`, one signed checkpoint per line. */
export const checkpointPathOf = (path: string) => `${path}.checkpoints`;

/** The checkpoints of the checkpoint file as its writer knows them: the highest, and each one's id. */
export interface HeldCheckpoints {
  newest: AuditCheckpoint | undefined;
  /** The highest that carries a signed note. */
  newestNoted: AuditCheckpoint | undefined;
  readonly signatures: Set<string>;
}

/** Notes one checkpoint of the file in what its writer holds. */
export function hold(held: HeldCheckpoints, c: AuditCheckpoint): void {
  held.signatures.add(checkpointIdOf(c));
  if (held.newest === undefined || c.seq > held.newest.seq) held.newest = c;
  if (c.note !== undefined && (held.newestNoted === undefined || c.seq > held.newestNoted.seq))
    held.newestNoted = c;
}

/** The checkpoint file's lines, in the order written (which is seq order: one writer). */
export async function* checkpointsOf(
  file: string,
): AsyncGenerator<AuditCheckpoint | { readonly invalid: string }> {
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
 * Appends the checkpoint's line to the file; a line that cannot be written whole is cut off
 * again. Its cosignatures are not in it: they go to the witness file beside it
 * (audit-witnesses.ts), so the line is what readers of this file have always read.
 */
export function appendCheckpoint(file: string, checkpoint: AuditCheckpoint): void {
  const { cosignatures: _kept, ...line } = checkpoint;
  appendWholeLine(file, JSON.stringify(line));
}
