import type { Crn } from '../domain/crn.js';
import type {
  CaseRecord,
  CommunityManager,
  HomeOfficeInterest,
  JsonText,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
} from '../domain/types.js';

/**
 * The case repository port: where case data is read from (fixtures in memory, a SQLite
 * file, PostgreSQL, an upstream system of record). Contract, checked by
 * `test/contract/case-repository.contract.ts`:
 *
 * - "not found" is `undefined`, never an exception; an exception means the store failed;
 * - optional values come back as `null`, never absent; lists as arrays, `[]` when empty;
 * - lists keep the order in which they were stored;
 * - date-times come back exactly as stored (ISO 8601 with offset);
 * - answers are fresh objects: a caller mutating one cannot change what the next caller sees.
 */
export interface CaseRepository {
  findPersonalDetails(crn: Crn): Promise<PersonalDetailsAndCircumstances | undefined>;
  /**
   * Optional: the same document as `findPersonalDetails`, as the JSON text to send. An
   * adapter that holds the text offers it, so the service need not parse and re-serialise
   * it; the contract suite checks that it parses to exactly what `findPersonalDetails` says.
   */
  findPersonalDetailsText?(crn: Crn): Promise<JsonText<PersonalDetailsAndCircumstances> | undefined>;
  findHomeOfficeInterest(crn: Crn): Promise<HomeOfficeInterest | undefined>;
  /**
   * `{ communityManager: null }` when the case is held but has no active community manager;
   * `undefined` when no case is held.
   */
  findCommunityManager(crn: Crn): Promise<{ communityManager: CommunityManager | null } | undefined>;
  /** Every risk assessment held for the case, in any order; `[]` when none. */
  findRiskScores(crn: Crn): Promise<RiskPredictorScore[] | undefined>;
}

/** Writes cases: `cases import` and `cases generate`, never `serve`. */
export interface CaseWriter {
  /** Stores the records as one unit, replacing any case already held under the same crn. */
  write(records: readonly CaseRecord[]): Promise<void>;
  /** How many cases are held. */
  count(): Promise<number>;
}
