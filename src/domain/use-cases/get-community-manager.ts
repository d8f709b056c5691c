import { minimiseCommunityManager } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import { CommunityManagerNotFoundError } from '../errors.js';
import type { CommunityOffenderManager } from '../types.js';
import { type Answer, type CaseReadDeps, type CaseReader, readAdmitted } from './case-found.js';

/**
 * Operation `getCommunityManagerByCrn`: the case reference and its community manager, if
 * the reader may see the case. A held case with no active manager is "not found" too, as in
 * the upstream service, but only to a reader who may see the case.
 */
export async function getCommunityManagerByCrn(
  { repository, now }: CaseReadDeps<'findCommunityManager'>,
  crn: Crn,
  reader?: CaseReader,
): Promise<Answer<CommunityOffenderManager>> {
  return readAdmitted(
    crn,
    reader,
    now,
    (c, f) => repository.findCommunityManager(c, f),
    ({ communityManager }, withheld) => {
      if (communityManager === null) throw new CommunityManagerNotFoundError(crn.value);
      return minimiseCommunityManager({ crn: crn.value, communityManager }, withheld);
    },
  );
}
