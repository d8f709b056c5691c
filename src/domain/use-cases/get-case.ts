import type { CaseRepository } from '../../ports/case-repository.js';
import type { Crn } from '../crn.js';
import { CaseNotFoundError } from '../errors.js';
import type { JsonText, PersonalDetailsAndCircumstances } from '../types.js';

export interface GetCaseDeps {
  readonly repository: Pick<CaseRepository, 'findPersonalDetails'>;
}

/** Operation `getCase`: personal details and circumstances for one case. */
export async function getCase(
  { repository }: GetCaseDeps,
  crn: Crn,
): Promise<PersonalDetailsAndCircumstances> {
  const details = await repository.findPersonalDetails(crn);
  if (details === undefined) throw new CaseNotFoundError(crn.value);
  return details;
}

/** `getCase` as JSON text, for a repository that holds it (see `findPersonalDetailsText`). */
export async function getCaseText(
  { repository }: { readonly repository: Required<Pick<CaseRepository, 'findPersonalDetailsText'>> },
  crn: Crn,
): Promise<JsonText<PersonalDetailsAndCircumstances>> {
  const text = await repository.findPersonalDetailsText(crn);
  if (text === undefined) throw new CaseNotFoundError(crn.value);
  return text;
}
