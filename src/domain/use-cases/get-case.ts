import {
  type MinimisedPersonalDetails,
  minimisePersonalDetails,
  type RedactableField,
} from '../access/redaction.js';
import type { Crn } from '../crn.js';
import type { JsonText, PersonalDetailsAndCircumstances } from '../types.js';
import { type CaseReadDeps, foundFor } from './case-found.js';

/**
 * Operation `getCase`: personal details and circumstances for one case, with any field the
 * client has withheld answered as null.
 */
export async function getCase(
  { repository }: CaseReadDeps<'findPersonalDetails'>,
  crn: Crn,
  withheld: readonly RedactableField[] = [],
): Promise<MinimisedPersonalDetails> {
  return minimisePersonalDetails(foundFor(crn, await repository.findPersonalDetails(crn)), withheld);
}

/**
 * `getCase` as the stored JSON text, for a repository that holds it (see
 * `findPersonalDetailsText`) and a client that has none of these fields withheld: text is
 * sent as it is, so it can withhold nothing (see `withholdsPersonalDetails`).
 */
export async function getCaseText(
  { repository }: CaseReadDeps<'findPersonalDetailsText'>,
  crn: Crn,
): Promise<JsonText<PersonalDetailsAndCircumstances>> {
  return foundFor(crn, await repository.findPersonalDetailsText(crn));
}
