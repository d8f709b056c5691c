import { minimiseCommunityManager } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import { CommunityManagerNotFoundError } from '../errors.js';
import type { CommunityOffenderManager } from '../types.js';
import {
  type Answer,
  admitted,
  type CaseReadDeps,
  type CaseReader,
  CLIENT_AS_ITSELF,
  readFor,
} from './case-found.js';

/**
 * Operation `getCommunityManagerByCrn`: the case reference and its community manager, if
 * the reader may see the case. A held case with no active manager is "not found" too, as in
 * the upstream service, but only to a reader who may see the case.
 */
export async function getCommunityManagerByCrn(
  { repository, now }: CaseReadDeps<'findCommunityManager'>,
  crn: Crn,
  reader: CaseReader = CLIENT_AS_ITSELF,
): Promise<Answer<CommunityOffenderManager>> {
  const answer = admitted(crn, await repository.findCommunityManager(crn, readFor(reader)), reader, now);
  const { communityManager } = answer.body;
  if (communityManager === null) throw new CommunityManagerNotFoundError(crn.value);
  return {
    ...answer,
    body: minimiseCommunityManager({ crn: crn.value, communityManager }, reader.withheld),
  };
}
