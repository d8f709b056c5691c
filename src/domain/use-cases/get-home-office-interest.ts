import type { CaseRepository } from '../../ports/case-repository.js';
import type { Crn } from '../crn.js';
import type { HomeOfficeInterest } from '../types.js';
import { foundFor } from './case-found.js';

export interface GetHomeOfficeInterestDeps {
  readonly repository: Pick<CaseRepository, 'findHomeOfficeInterest'>;
}

/** Operation `getHomeOfficeInterest`: whether the Home Office has an interest, with notes. */
export async function getHomeOfficeInterest(
  { repository }: GetHomeOfficeInterestDeps,
  crn: Crn,
): Promise<HomeOfficeInterest> {
  return foundFor(crn, await repository.findHomeOfficeInterest(crn));
}
