import type { HeldCase } from './types.js';

/**
 * One case read: what the service answers about the person a crn names, to a client granted
 * its permission. A row of {@link CASE_OPERATIONS}.
 */
export interface CaseOperation {
  /** The operation id, which is also the permission a client must hold for it. */
  readonly id: string;
  /** Its path in the OpenAPI document; `{crn}` is the case reference number. */
  readonly path: `/${string}{crn}${string}`;
  /**
   * Whether it asks for a bearer JWT besides the client certificate and the API key
   * (decisions §1 step 6): the specification's bearer scheme covers the `/case` reads only.
   */
  readonly bearer: boolean;
  /** The fields a client may have withheld from its answer (decisions §8), as `--redact` names them. */
  readonly withholds: readonly string[];
  /**
   * The part of the subject access answer's held case that holds what it reads, as the store
   * holds it (decisions §22); `null` only for a read of nothing about the person.
   */
  readonly heldAs: keyof HeldCase | null;
}

/**
 * **The case operations, one row each.** The routes' paths, permissions and security
 * requirement, the permission list, the fields a client may have withheld, the bearer check,
 * the development client's grants and what subject access must hold are all read from here;
 * how to add one is in docs/architecture/README.md, "How to add an operation".
 */
export const CASE_OPERATIONS = [
  {
    id: 'getCase',
    path: '/case/{crn}',
    bearer: true,
    withholds: ['preferredLanguage', 'personalCircumstances', 'disabilities', 'offenderPersonalityDisorder'],
    heldAs: 'personalDetails',
  },
  {
    id: 'getHomeOfficeInterest',
    path: '/case/{crn}/home-office-interest',
    bearer: true,
    withholds: ['homeOfficeInterest.notes'],
    heldAs: 'homeOfficeInterest',
  },
  {
    id: 'getCommunityManagerByCrn',
    path: '/case/{crn}/community-manager',
    bearer: true,
    withholds: [
      'communityManager.jobRole',
      'communityManager.emailAddress',
      'communityManager.officeName',
      'communityManager.teamPhoneNumber',
      'communityManager.name.middleName',
    ],
    heldAs: 'communityManager',
  },
  {
    id: 'getRiskScores',
    path: '/v1/persons/{crn}/risks/scores',
    bearer: false,
    withholds: [],
    heldAs: 'riskScores',
  },
] as const satisfies readonly CaseOperation[];

/** A case operation's id (and permission). */
export type CaseRead = (typeof CASE_OPERATIONS)[number]['id'];

/** The case operations' permissions, in the table's order. */
export const CASE_READS: readonly CaseRead[] = CASE_OPERATIONS.map((operation) => operation.id);

/** A case operation's row. */
export type CaseOperationRow<Id extends CaseRead = CaseRead> = Extract<
  (typeof CASE_OPERATIONS)[number],
  { id: Id }
>;

/** The row of one case operation. */
export function caseOperation<Id extends CaseRead>(id: Id): CaseOperationRow<Id> {
  const row = CASE_OPERATIONS.find((candidate): candidate is CaseOperationRow<Id> => candidate.id === id);
  if (row === undefined) throw new Error(`no case operation ${id}`);
  return row;
}

/** Whether `operation` asks for a bearer JWT: a case operation whose row says so; no other operation does. */
export const requiresBearer = (operation: string): boolean =>
  CASE_OPERATIONS.some((row) => row.id === operation && row.bearer);

/** A case operation's path for one crn, as a client sends it (the crn percent-encoded). */
export const casePath = (operation: CaseOperation, crn: string): string =>
  operation.path.replace('{crn}', encodeURIComponent(crn));

/** The parts of the held case some row reads. */
type HeldParts = NonNullable<(typeof CASE_OPERATIONS)[number]['heldAs']>;
type NoneLeft<Parts extends never> = Parts;
/** Every part of the subject access answer's held case is some case operation's (its `heldAs`): a part no row reads fails to compile here. */
export type EveryHeldPartIsRead = NoneLeft<Exclude<keyof HeldCase, HeldParts>>;
