import type { CaseRepository, Held, ReadFor } from '../../ports/case-repository.js';
import type { Deadline } from '../../ports/deadline.js';
import {
  DEFAULT_LIMITED_ACCESS_SETTING,
  decideLimitedAccess,
  type Reader,
} from '../access/limited-access.js';
import type { RedactableField } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import { CaseNotFoundError, LimitedAccessError } from '../errors.js';

/** A repository that has the finders `F`. */
export type FindersOf<F extends keyof CaseRepository> = Required<Pick<CaseRepository, F>>;

/** What a crn operation needs: a repository `P` with the finders it calls, and the time to decide at. */
interface ReadDeps<P> {
  readonly repository: P;
  /** Now; the system clock unless a test sets it. */
  readonly now?: () => Date;
}

/** What a crn operation needs that calls the repository's finders `F`. */
export type CaseReadDeps<F extends keyof CaseRepository> = ReadDeps<FindersOf<F>>;

/**
 * Who reads a case: the on-behalf-of user (null when the client acts as itself), with the
 * token that proved it (relayed to a store that decides limited access itself), the
 * client's limited-access setting and the fields withheld from it.
 */
export interface CaseReader extends Reader {
  readonly withheld: readonly RedactableField[];
  readonly onBehalfOfToken: string | null;
  /** The request's deadline, handed to the store (an upstream gives up its call at it). */
  readonly deadline?: Deadline | undefined;
}

/** A client acting as itself, with the default setting: refused every limited case, withheld nothing. */
export const CLIENT_AS_ITSELF: CaseReader = {
  user: null,
  onBehalfOfToken: null,
  limitedAccess: DEFAULT_LIMITED_ACCESS_SETTING,
  withheld: [],
};

/**
 * An answer, and how limited access let it through: `open` (nothing limits this reader) or
 * `client-enforces` (a limited case answered to a client acting as itself under `allow`,
 * which the audit trail records).
 */
export interface Answer<T> {
  readonly body: T;
  readonly access: 'open' | 'client-enforces';
}

/** What a store that decides limited access itself needs to know of the reader. */
export const readFor = (reader: CaseReader): ReadFor => ({
  onBehalfOf:
    reader.user !== null && reader.onBehalfOfToken !== null
      ? { email: reader.user, token: reader.onBehalfOfToken }
      : null,
  deadline: reader.deadline,
});

/**
 * Reads one part of a case for `reader` (a client acting as itself, refused every limited
 * case, when none is given) and answers it shaped by `answer`, which is given the fields
 * withheld from the client. An unknown crn is "not found" (never a refusal, which would
 * say the case exists and is limited); a case whose rules refuse the reader throws
 * `LimitedAccessError` before anything of it is answered.
 */
export async function readAdmitted<T, R>(
  crn: Crn,
  reader: CaseReader = CLIENT_AS_ITSELF,
  now: () => Date = () => new Date(),
  find: (crn: Crn, readFor: ReadFor) => Promise<Held<T> | undefined>,
  answer: (part: T, withheld: CaseReader['withheld']) => R,
): Promise<Answer<R>> {
  const held = await find(crn, readFor(reader));
  if (held === undefined) throw new CaseNotFoundError(crn.value);
  const decision = decideLimitedAccess(held.limitedAccess, reader, now());
  if (decision.outcome === 'excluded' || decision.outcome === 'restricted') {
    throw new LimitedAccessError(decision.outcome, decision.message);
  }
  return { body: answer(held.value, reader.withheld), access: decision.outcome };
}

/**
 * A crn operation that reads one part of a case with `find` (a finder of its repository
 * `P`), for a reader (see {@link readAdmitted}), and answers it shaped by `answer`, which is
 * given the fields withheld from the client and the crn.
 */
export function caseReadOperation<P, T, R>(
  find: (repository: P, crn: Crn, readFor: ReadFor) => Promise<Held<T> | undefined>,
  answer: (part: T, withheld: CaseReader['withheld'], crn: Crn) => R,
): (deps: ReadDeps<P>, crn: Crn, reader?: CaseReader) => Promise<Answer<R>> {
  return ({ repository, now }, crn, reader) =>
    readAdmitted(
      crn,
      reader,
      now,
      (c, f) => find(repository, c, f),
      (part, withheld) => answer(part, withheld, crn),
    );
}
