import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import {
  type AuditCheckpoint,
  CheckpointSet,
  checkpointOf,
  describeCheckpoint,
} from '../../domain/audit/checkpoint.js';
import type { AuditCheckpointStore } from '../../ports/audit-log.js';
import type { CheckpointKeyring } from '../../ports/checkpoint-keys.js';
import { type NoteVerifier, openCheckpointNote, verifyWith } from '../../tlog/note.js';

/**
 * The checkpoints `audit verify` checks a chain against (decisions §9): those stored beside
 * the trail, and those kept elsewhere, in files of JSON lines (the output of `audit
 * checkpoints --json`, or the service's own log, whose other lines are skipped). Each one's
 * signature is checked first: one that does not verify, or whose key was not given, is
 * refused, never used and never skipped.
 */

export interface Evidence {
  readonly checkpoints: CheckpointSet;
  /** How many came from the store. */
  readonly stored: number;
  /** Checkpoints found in the files that the store does not hold (lost on the way there, or removed from it). */
  readonly onlyInFiles: number;
}

/** A checkpoint that cannot be used: the message names it and where it was found. */
export class CheckpointEvidenceError extends Error {
  override readonly name = 'CheckpointEvidenceError';
}

/** A line of a file, as a checkpoint: the log's `"msg":"audit checkpoint"` line, or a bare one; undefined for any other line. */
function checkpointLine(line: string): unknown {
  if (!line.includes('"signature"')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.msg === 'audit checkpoint') return v.checkpoint ?? {};
  return 'seq' in v && 'head' in v && 'signature' in v ? v : undefined;
}

function checkSignature(keyring: CheckpointKeyring, checkpoint: AuditCheckpoint, where: string): void {
  const check = keyring.check(checkpoint);
  if (check === 'valid') return;
  throw new CheckpointEvidenceError(
    check === 'unknown-key'
      ? `the ${describeCheckpoint(checkpoint)} ${where} is signed by key ${checkpoint.keyId}, which no --public-key gives`
      : `the ${describeCheckpoint(checkpoint)} ${where} has a signature that does not verify with its key: it was forged or changed`,
  );
}

/**
 * A checkpoint's signed note (decisions §14), when it carries one: signed by one of `noteKeys`
 * (the same public keys, named by the log's origin, each checking its own signatures: they are
 * handed in, as `audit verify` makes them), of the tree of `seq` leaves; its root is
 * noted for the walk to check. A note that does not verify is refused like a bad signature.
 */
function checkNote(
  noteKeys: readonly NoteVerifier[],
  checkpoints: CheckpointSet,
  checkpoint: AuditCheckpoint,
  where: string,
  originAt?: (size: number) => string,
): void {
  if (checkpoint.note === undefined) return;
  const what = `the note of the ${describeCheckpoint(checkpoint)} ${where}`;
  const opened = openCheckpointNote(checkpoint.note, noteKeys, verifyWith(noteKeys));
  if (!opened.ok && opened.step === 'signature') {
    const origins = [...new Set(noteKeys.map((k) => k.name))].join(', ');
    throw new CheckpointEvidenceError(
      `${what}: ${opened.reason} (the keys given are named ${origins}: is that the log's origin, AUDIT_ORIGIN or --origin?)`,
    );
  }
  if (!opened.ok) throw new CheckpointEvidenceError(`${what}: ${opened.reason}`);
  const { body } = opened;
  const origin = originAt?.(body.size);
  if (origin !== undefined && body.origin !== origin) {
    throw new CheckpointEvidenceError(
      `${what} names the log ${body.origin}, but the trail was ${origin} at ${body.size} records (audit continue): a checkpoint under the wrong log`,
    );
  }
  if (body.size !== checkpoint.seq) {
    throw new CheckpointEvidenceError(
      `${what} signs a tree of ${body.size} records, not ${checkpoint.seq}: it was changed`,
    );
  }
  if (!checkpoints.addRoot(body.size, body.root)) {
    throw new CheckpointEvidenceError(
      `${what} signs another root for the tree of ${body.size} records than a checkpoint before it: two different trails were signed`,
    );
  }
}

/** Reads and checks every checkpoint; throws {@link CheckpointEvidenceError} at the first that cannot be used. */
export async function gatherCheckpoints(
  store: AuditCheckpointStore,
  files: readonly string[],
  keyring: CheckpointKeyring,
  noteKeys: readonly NoteVerifier[] = [],
  /** The log a checkpoint of each size must name, when the trail was continued (ADR 30). */
  originAt?: (size: number) => string,
): Promise<Evidence> {
  const checkpoints = new CheckpointSet();
  let stored = 0;
  for await (const read of store.checkpoints()) {
    if ('invalid' in read) throw new CheckpointEvidenceError(read.invalid);
    checkSignature(keyring, read, 'in the store');
    checkNote(noteKeys, checkpoints, read, 'in the store', originAt);
    if (checkpoints.add(read)) stored++;
  }
  let onlyInFiles = 0;
  for (const file of files) {
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    let number = 0;
    try {
      for await (const line of lines) {
        number++;
        const value = checkpointLine(line);
        if (value === undefined) continue;
        const read = checkpointOf(value);
        if ('invalid' in read) {
          throw new CheckpointEvidenceError(
            `${file} line ${number}: a checkpoint that cannot be read (${read.invalid})`,
          );
        }
        checkSignature(keyring, read, `in ${file} line ${number}`);
        checkNote(noteKeys, checkpoints, read, `in ${file} line ${number}`, originAt);
        if (checkpoints.add(read)) onlyInFiles++;
      }
    } catch (error) {
      if (error instanceof CheckpointEvidenceError) throw error;
      throw new CheckpointEvidenceError(
        `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    } finally {
      lines.close();
    }
  }
  return { checkpoints, stored, onlyInFiles };
}
