import type { LimitedAccess } from '../domain/access/limited-access.js';
import type { Crn } from '../domain/crn.js';
import type {
  CaseRecord,
  CommunityManager,
  HomeOfficeInterest,
  JsonText,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
} from '../domain/types.js';
import type { Deadline } from './deadline.js';

/**
 * One part of a held case, with the case's limited-access rules as held (null when it has
 * none): every read brings them, so deciding costs no query of its own.
 */
export interface Held<T> {
  readonly value: T;
  readonly limitedAccess: LimitedAccess | null;
}

/**
 * Who a read is for, as far as a store needs to know: a store that decides limited access
 * itself (the upstream system of record) is told the verified on-behalf-of user and handed
 * the token that proves it, to relay. Stores that hold the rules ignore it.
 */
export interface ReadFor {
  readonly onBehalfOf: { readonly email: string; readonly token: string } | null;
  /** The request's deadline: a store that can give up its call when it passes does. */
  readonly deadline?: Deadline | undefined;
}

/**
 * The case repository port: where case data is read from (a store of any kind that can
 * hold cases: a database, a file, the upstream system of record). Contract, checked by
 * `test/contract/case-repository.contract.ts`:
 *
 * - "not found" is `undefined`, never an exception; an exception means the store failed;
 * - optional values come back as `null`, never absent; lists as arrays, `[]` when empty;
 * - lists keep the order in which they were stored;
 * - date-times come back exactly as stored (ISO 8601 with offset);
 * - answers are fresh objects: a caller mutating one cannot change what the next caller sees;
 * - every answer comes with the case's limited-access rules as held, ended rules included
 *   (`null` for a case without rules); a store that decides them itself (upstream) answers
 *   `null` and throws `LimitedAccessError` for a reader it refuses;
 * - how it fails (a store that cannot be opened, an engine down, a record that cannot be
 *   read back) is the store error convention of `store-errors.ts`.
 */
export interface CaseRepository {
  findPersonalDetails(
    crn: Crn,
    readFor?: ReadFor,
  ): Promise<Held<PersonalDetailsAndCircumstances> | undefined>;
  /**
   * Optional: the same document as `findPersonalDetails`, as the JSON text to send. An
   * adapter that holds the text offers it, so the service need not parse and re-serialise
   * it; the contract suite checks that it parses to exactly what `findPersonalDetails` says.
   */
  findPersonalDetailsText?(
    crn: Crn,
    readFor?: ReadFor,
  ): Promise<Held<JsonText<PersonalDetailsAndCircumstances>> | undefined>;
  findHomeOfficeInterest(crn: Crn, readFor?: ReadFor): Promise<Held<HomeOfficeInterest> | undefined>;
  /**
   * `{ communityManager: null }` when the case is held but has no active community manager;
   * `undefined` when no case is held.
   */
  findCommunityManager(
    crn: Crn,
    readFor?: ReadFor,
  ): Promise<Held<{ communityManager: CommunityManager | null }> | undefined>;
  /** Every risk assessment held for the case, in any order; `[]` when none. */
  findRiskScores(crn: Crn, readFor?: ReadFor): Promise<Held<RiskPredictorScore[]> | undefined>;
}

/** Writes cases: `cases import` and `cases generate`, never `serve`. */
export interface CaseWriter {
  /** Stores the records as one unit, replacing any case already held under the same crn. */
  write(records: readonly CaseRecord[]): Promise<void>;
  /** How many cases are held. */
  count(): Promise<number>;
}
