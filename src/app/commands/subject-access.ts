// `case-read subject-access`: a subject access request answered offline (decisions §22), from
// a copy of the audit store and its archive (and the case store, when given), with the content
// `GET /subject-access-request` gives; so an oversight body holding a copy of the trail
// reproduces any answer. Nothing is signed here: a record newer than the newest checkpoint is
// refused until one covers it.
import { Crn } from '../../domain/crn.js';
import {
  InvalidCrnError,
  InvalidSubjectAccessRequestError,
  TrailIncompleteError,
} from '../../domain/errors.js';
import { contentLines } from '../../domain/subject-access/content-text.js';
import { getSubjectAccessRequest } from '../../domain/use-cases/subject-access.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import type { Opened } from '../../ports/stores.js';
import { ContinuationError, keysOfTrail } from '../audit/continuation.js';
import { disclosuresOf } from '../audit/disclosures.js';
import { auditHashes, noteVerifier } from '../composition/audit-keys.js';
import { ConfigError, crnFormatOf } from '../composition/config.js';
import { STORE_REGISTRY } from '../composition/store-kinds.js';
import { answerSpills, checkedArchive } from '../composition/subject-access.js';
import { type NoteKeysGiven, noteKeysOf } from './audit/options.js';
import { storeOption, storeWiringOf, withAuditStore } from './command-stores.js';
import { CommandError, EXIT, OutputClosedError, UsageError } from './exit.js';
import type { Io } from './io.js';

export interface SubjectAccessGiven extends NoteKeysGiven {
  readonly crn: string;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly archive?: string | undefined;
  readonly auditStore?: string | undefined;
  readonly caseStore?: string | undefined;
}

/** The option a window's error is about, as the command names it. */
const OPTION_OF: Record<string, string> = { fromDate: '--from', toDate: '--to' };

/** The case store given with `--case-store`, when it keeps copies (the upstream holds none). */
async function openCaseCopies(
  given: string | undefined,
  io: Io,
): Promise<Opened<CaseRepository> | undefined> {
  if (given === undefined) return undefined;
  const ref = storeOption('--case-store', 'CASE_STORE', given, io.env);
  if (STORE_REGISTRY.decidesLimitedAccess(ref)) {
    throw new UsageError(
      '--case-store: the system of record keeps no copies of cases; give a store that does, or none',
    );
  }
  return STORE_REGISTRY.openCaseRepository(ref, storeWiringOf(io));
}

export async function subjectAccess(given: SubjectAccessGiven, io: Io): Promise<number> {
  let crn: Crn;
  try {
    crn = Crn.parse(given.crn, crnFormatOf(io.env));
  } catch (error) {
    if (error instanceof InvalidCrnError) throw new UsageError(`--crn: ${error.reason}`);
    if (error instanceof ConfigError) throw error;
    throw error;
  }
  const keys = noteKeysOf(given, io);
  const cases = await openCaseCopies(given.caseStore, io);
  try {
    return await withAuditStore(given.auditStore, io, async (log) => {
      // Named by every origin the trail had (a continued trail's archive is the log before's).
      const named = await keysOfTrail(log, keys, auditHashes.sha256, noteVerifier).catch((error: unknown) => {
        if (error instanceof ContinuationError) throw new CommandError(error.message);
        throw error;
      });
      const archive = await checkedArchive(given.archive, log, named, '--archive').catch((error: unknown) => {
        if (error instanceof ConfigError) throw new CommandError(error.problems.join('; '));
        throw error;
      });
      const disclosures = disclosuresOf({
        hashes: auditHashes,
        log,
        keys: named,
        archive,
        spill: answerSpills,
      });
      const answer = await getSubjectAccessRequest(
        { disclosures, caseCopies: cases?.value, now: () => new Date() },
        { crn, fromDate: given.from, toDate: given.to },
      ).catch((error: unknown) => {
        if (error instanceof InvalidSubjectAccessRequestError) {
          throw new UsageError(`${OPTION_OF[error.parameter] ?? error.parameter}: ${error.message}`);
        }
        if (error instanceof TrailIncompleteError) throw new CommandError(error.reason);
        throw error;
      });
      if (answer.kind !== 'content') {
        io.err(
          'case-read: nothing is held about that crn in the window, and the trail lost no records in it (serve answers 204)',
        );
        return EXIT.ok;
      }
      // The content as serve sends it, a batch of disclosures a line, the proof on one.
      try {
        for await (const line of contentLines(answer)) io.out(line);
      } catch (error) {
        if (error instanceof OutputClosedError) throw error;
        throw new CommandError(
          `${error instanceof TrailIncompleteError ? error.reason : (error as Error).message}: the output above is incomplete`,
        );
      }
      return EXIT.ok;
    });
  } finally {
    await cases?.close();
  }
}
