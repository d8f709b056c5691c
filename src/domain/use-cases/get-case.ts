import type { CaseRepository } from '../../ports/case-repository.js';
import type { Crn } from '../crn.js';
import type { JsonText, PersonalDetailsAndCircumstances } from '../types.js';
import { foundFor } from './case-found.js';

export interface GetCaseDeps {
  readonly repository: Pick<CaseRepository, 'findPersonalDetails'>;
}

/** Operation `getCase`: personal details and circumstances for one case. */
export async function getCase(
  { repository }: GetCaseDeps,
  crn: Crn,
): Promise<PersonalDetailsAndCircumstances> {
  return foundFor(crn, await repository.findPersonalDetails(crn));
}

/** `getCase` as JSON text, for a repository that holds it (see `findPersonalDetailsText`). */
export async function getCaseText(
  { repository }: { readonly repository: Required<Pick<CaseRepository, 'findPersonalDetailsText'>> },
  crn: Crn,
): Promise<JsonText<PersonalDetailsAndCircumstances>> {
  return foundFor(crn, await repository.findPersonalDetailsText(crn));
}
