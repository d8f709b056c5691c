import type { CaseRepository } from '../../ports/case-repository.js';
import type { Crn } from '../crn.js';
import { CaseNotFoundError } from '../errors.js';
import type { HomeOfficeInterest } from '../types.js';

export interface GetHomeOfficeInterestDeps {
  readonly repository: Pick<CaseRepository, 'findHomeOfficeInterest'>;
}

/** Operation `getHomeOfficeInterest`: whether the Home Office has an interest, with notes. */
export async function getHomeOfficeInterest(
  { repository }: GetHomeOfficeInterestDeps,
  crn: Crn,
): Promise<HomeOfficeInterest> {
  const interest = await repository.findHomeOfficeInterest(crn);
  if (interest === undefined) throw new CaseNotFoundError(crn.value);
  return interest;
}
