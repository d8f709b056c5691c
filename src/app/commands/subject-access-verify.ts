// `case-read subject-access verify ANSWER`: a saved subject access answer (of serve's
// GET /subject-access-request, or of `case-read subject-access`) checked offline with the log's
// key (decisions §22, §23; ADR 27): every disclosure proved in the tree its checkpoint signs, and
// shown as its entry's bytes say. No store, no network. The check is
// src/app/audit/answer-verify.ts; examples/subject-access-verify does the same with Go's
// sumdb/tlog.
import {
  type Answer,
  AnswerNotProvedError,
  NotAnAnswerError,
  readAnswer,
  verifyAnswer,
} from '../audit/answer-verify.js';
import { auditHashes, readRegularFileSync } from '../composition/audit-keys.js';
import { type NoteKeysGiven, noteKeysOf } from './audit/options.js';
import { CommandError, EXIT } from './exit.js';
import type { Io } from './io.js';

/**
 * Most an answer file may hold: the SAR service buffers at most 100 MB of an answer (decisions
 * §23), so more is no answer it took; a bound, so that a file named by mistake is refused
 * rather than read into memory.
 */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/**
 * `subject-access verify ANSWER (--vkey V | --public-key PEM [--origin O])`: exit 0 printing how
 * many disclosures were proved and against which checkpoint (and, on a line of its own, the
 * losses of the trail the answer states, read, not proved); exit 1 naming the first disclosure
 * not proved, or not shown as its entry says, or what else is wrong (the checkpoint, the hashes,
 * a file that is not an answer).
 */
export async function subjectAccessVerify(file: string, given: NoteKeysGiven, io: Io): Promise<number> {
  const keys = noteKeysOf(given, io);
  // A regular file only: a FIFO or a directory is refused, never waited on.
  const { bytes } = readRegularFileSync('', file, (message) => new CommandError(message.trimStart()), {
    maxBytes: MAX_ANSWER_BYTES,
  });
  let answer: Answer;
  try {
    answer = readAnswer(bytes.toString('utf8'));
  } catch (error) {
    if (error instanceof NotAnAnswerError) {
      throw new CommandError(`${file} is not a subject access answer: ${error.message}`);
    }
    throw error;
  }
  let verified: ReturnType<typeof verifyAnswer>;
  try {
    verified = verifyAnswer(answer, keys, auditHashes);
  } catch (error) {
    if (error instanceof AnswerNotProvedError) throw new CommandError(`${file}: ${error.message}`);
    throw error;
  }
  const { checkpoint } = verified;
  io.out(
    checkpoint === undefined
      ? `the answer for ${verified.crn} lists no disclosures: nothing to prove`
      : `${verified.disclosures} disclosure(s) of ${verified.crn} proved against the checkpoint of ${checkpoint.size} records of ${checkpoint.origin}, each shown as its entry says`,
  );
  const gaps = verified.gaps ?? [];
  if (gaps.length > 0) {
    const lost = gaps.reduce((sum, gap) => sum + gap.recordsLost, 0);
    io.out(
      `the answer states ${gaps.length} loss(es) of the audit trail in its window (${lost} record(s) lost), not proved by it: case-read audit verify checks the trail's signed statement of each`,
    );
  }
  return EXIT.ok;
}
