import { minimiseHomeOfficeInterest, type RedactableField } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import type { HomeOfficeInterest } from '../types.js';
import { type CaseReadDeps, foundFor } from './case-found.js';

/**
 * Operation `getHomeOfficeInterest`: whether the Home Office has an interest, with notes
 * (null when the client has them withheld).
 */
export async function getHomeOfficeInterest(
  { repository }: CaseReadDeps<'findHomeOfficeInterest'>,
  crn: Crn,
  withheld: readonly RedactableField[] = [],
): Promise<HomeOfficeInterest> {
  return minimiseHomeOfficeInterest(foundFor(crn, await repository.findHomeOfficeInterest(crn)), withheld);
}
