import { minimiseCommunityManager } from '../access/redaction.js';
import { CommunityManagerNotFoundError } from '../errors.js';
import { caseReadOperation, type FindersOf } from './case-found.js';

/**
 * Operation `getCommunityManagerByCrn`: the case reference and its community manager, if
 * the reader may see the case. A held case with no active manager is "not found" too, as in
 * the upstream service, but only to a reader who may see the case.
 */
export const getCommunityManagerByCrn = caseReadOperation(
  (repository: FindersOf<'findCommunityManager'>, crn, readFor) =>
    repository.findCommunityManager(crn, readFor),
  ({ communityManager }, withheld, crn) => {
    if (communityManager === null) throw new CommunityManagerNotFoundError(crn.value);
    return minimiseCommunityManager({ crn: crn.value, communityManager }, withheld);
  },
);
