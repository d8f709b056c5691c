import { CASE_OPERATIONS, caseOperation } from '../case-operations.js';
import type {
  CommunityOffenderManager,
  HomeOfficeInterest,
  PersonalDetailsAndCircumstances,
} from '../types.js';

/**
 * Data minimisation per client (decisions §8): the fields a client may have withheld, each
 * case operation's (its `withholds` in case-operations.ts), in the table's order. A
 * withheld field is answered as `null`, whatever is held; every other field is answered as
 * it is. Grants for an on-behalf-of user widen operations, never fields.
 */
export const REDACTABLE_FIELDS = CASE_OPERATIONS.flatMap((operation) => operation.withholds);

export type RedactableField = (typeof REDACTABLE_FIELDS)[number];

export const isRedactableField = (value: string): value is RedactableField =>
  (REDACTABLE_FIELDS as readonly string[]).includes(value);

/**
 * `FIELD[,FIELD…]`, or `none` for no field; throws `Error` naming the allowed values. The
 * list comes back without repeats, in the order of {@link REDACTABLE_FIELDS}.
 */
export function parseRedactList(raw: string): RedactableField[] {
  if (raw.trim() === 'none') return [];
  const given = raw.split(',').map((field) => field.trim());
  const unknown = given.filter((field) => !isRedactableField(field));
  if (unknown.length > 0 || given.length === 0) {
    throw new Error(
      `unknown field to redact ${JSON.stringify(unknown[0] ?? raw)}; expected none, or one or more of ${REDACTABLE_FIELDS.join(', ')}`,
    );
  }
  return REDACTABLE_FIELDS.filter((field) => given.includes(field));
}

/** Personal details and circumstances as a minimised answer: a withheld field is null. */
export type MinimisedPersonalDetails = {
  readonly [K in keyof PersonalDetailsAndCircumstances]: PersonalDetailsAndCircumstances[K] | null;
};

/** The personal-details fields of the list (those a `getCase` answer can withhold). */
const PERSONAL_DETAILS_FIELDS = caseOperation('getCase').withholds satisfies readonly (RedactableField &
  keyof PersonalDetailsAndCircumstances)[];

/** Whether the list withholds anything a `getCase` answer holds. */
export const withholdsPersonalDetails = (withheld: readonly RedactableField[]): boolean =>
  PERSONAL_DETAILS_FIELDS.some((field) => withheld.includes(field));

export function minimisePersonalDetails(
  details: PersonalDetailsAndCircumstances,
  withheld: readonly RedactableField[],
): MinimisedPersonalDetails {
  if (withheld.length === 0) return details;
  const kept = <K extends (typeof PERSONAL_DETAILS_FIELDS)[number]>(field: K) =>
    withheld.includes(field) ? null : details[field];
  return {
    preferredLanguage: kept('preferredLanguage'),
    personalCircumstances: kept('personalCircumstances'),
    disabilities: kept('disabilities'),
    offenderPersonalityDisorder: kept('offenderPersonalityDisorder'),
  };
}

export function minimiseHomeOfficeInterest(
  interest: HomeOfficeInterest,
  withheld: readonly RedactableField[],
): HomeOfficeInterest {
  return withheld.length > 0 && withheld.includes('homeOfficeInterest.notes')
    ? { ...interest, notes: null }
    : interest;
}

export function minimiseCommunityManager(
  found: CommunityOffenderManager,
  withheld: readonly RedactableField[],
): CommunityOffenderManager {
  if (withheld.length === 0) return found;
  const nulled = (field: RedactableField, value: string | null) => (withheld.includes(field) ? null : value);
  const manager = found.communityManager;
  return {
    crn: found.crn,
    communityManager: {
      ...manager,
      name: {
        ...manager.name,
        middleName: nulled('communityManager.name.middleName', manager.name.middleName),
      },
      jobRole: nulled('communityManager.jobRole', manager.jobRole),
      emailAddress: nulled('communityManager.emailAddress', manager.emailAddress),
      officeName: nulled('communityManager.officeName', manager.officeName),
      teamPhoneNumber: nulled('communityManager.teamPhoneNumber', manager.teamPhoneNumber),
    },
  };
}
