import type { CaseRepository } from '../../ports/case-repository.js';
import { minimiseCommunityManager, type RedactableField } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import { CommunityManagerNotFoundError } from '../errors.js';
import type { CommunityOffenderManager } from '../types.js';
import { foundFor } from './case-found.js';

export interface GetCommunityManagerDeps {
  readonly repository: Pick<CaseRepository, 'findCommunityManager'>;
}

/**
 * Operation `getCommunityManagerByCrn`: the case reference and its community manager.
 * A held case with no active manager is "not found" too, as in the upstream service.
 */
export async function getCommunityManagerByCrn(
  { repository }: GetCommunityManagerDeps,
  crn: Crn,
  withheld: readonly RedactableField[] = [],
): Promise<CommunityOffenderManager> {
  const found = foundFor(crn, await repository.findCommunityManager(crn));
  if (found.communityManager === null) throw new CommunityManagerNotFoundError(crn.value);
  return minimiseCommunityManager({ crn: crn.value, communityManager: found.communityManager }, withheld);
}
