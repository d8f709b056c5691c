import { minimiseCommunityManager, type RedactableField } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import { CommunityManagerNotFoundError } from '../errors.js';
import type { CommunityOffenderManager } from '../types.js';
import { type CaseReadDeps, foundFor } from './case-found.js';

/**
 * Operation `getCommunityManagerByCrn`: the case reference and its community manager.
 * A held case with no active manager is "not found" too, as in the upstream service.
 */
export async function getCommunityManagerByCrn(
  { repository }: CaseReadDeps<'findCommunityManager'>,
  crn: Crn,
  withheld: readonly RedactableField[] = [],
): Promise<CommunityOffenderManager> {
  const found = foundFor(crn, await repository.findCommunityManager(crn));
  if (found.communityManager === null) throw new CommunityManagerNotFoundError(crn.value);
  return minimiseCommunityManager({ crn: crn.value, communityManager: found.communityManager }, withheld);
}
