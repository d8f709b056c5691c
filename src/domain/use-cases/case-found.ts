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

/** What a crn operation needs: the repository's finders it calls, and the time to decide at. */
export interface CaseReadDeps<F extends keyof CaseRepository> {
  readonly repository: Required<Pick<CaseRepository, F>>;
  /** Now; the system clock unless a test sets it. */
  readonly now?: () => Date;
}

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

/** The part of a case that the repository's finder `F` reads. */
type PartOf<F extends keyof CaseRepository> = Required<CaseRepository>[F] extends (
  crn: Crn,
  readFor?: ReadFor,
) => Promise<Held<infer T> | undefined>
  ? T
  : never;

/** The repository's finders `F`, each typed by the part it reads. */
type Finders<F extends keyof CaseRepository> = {
  readonly [K in F]: (crn: Crn, readFor?: ReadFor) => Promise<Held<PartOf<K>> | undefined>;
};

/**
 * A crn operation that reads one part of a case, the one the repository's `finder` reads,
 * for a reader (see {@link readAdmitted}), and answers it shaped by `answer`, which is given
 * the fields withheld from the client and the crn.
 */
export function caseReadOperation<F extends keyof CaseRepository, R>(
  finder: F,
  answer: (part: PartOf<F>, withheld: CaseReader['withheld'], crn: Crn) => R,
): (deps: CaseReadDeps<F>, crn: Crn, reader?: CaseReader) => Promise<Answer<R>> {
  return async ({ repository, now }, crn, reader) => {
    // The same object: TypeScript does not see through `Required<Pick<…, F>>[F]` for any F.
    const finders = repository as unknown as Finders<F>;
    return readAdmitted(
      crn,
      reader,
      now,
      (c, f) => finders[finder](c, f),
      (part, withheld) => answer(part, withheld, crn),
    );
  };
}
