import type { CaseRepository } from '../../ports/case-repository.js';
import type { Deadline } from '../../ports/deadline.js';
import type { DisclosureList, Disclosures } from '../../ports/disclosures.js';
import type { Crn } from '../crn.js';
import { InvalidSubjectAccessRequestError } from '../errors.js';
import { sarWindow } from '../subject-access/window.js';
import type { HeldCase } from '../types.js';

/**
 * Operation `getSubjectAccessRequest` (decisions §22): what is held about the person a crn
 * names, and who was given it, as the estate's subject access convention asks: the case as
 * the store holds it (where it keeps a copy) and every audit record naming the crn in the
 * window, complete or not at all.
 */

export interface SubjectAccessDeps {
  readonly disclosures: Disclosures;
  /** The case store, when it keeps copies of cases; absent for one that holds none (the upstream). */
  readonly caseCopies?: CaseRepository | undefined;
  readonly now: () => Date;
}

export interface SubjectAccessRequest {
  readonly prn?: string | undefined;
  readonly crn?: Crn | undefined;
  readonly fromDate?: string | undefined;
  readonly toDate?: string | undefined;
}

/**
 * `not-ours`: a prn alone, which this service (probation data only) does not know (209);
 * `nothing-held`: nothing about the crn in the window (204), and no loss of the trail in it;
 * else the content, its disclosures checked whole and to be read again as they are sent. A
 * loss that meets the window (records of requests lost from the trail, which may have named
 * the crn) is content even with no case and no disclosure: the person is told records are
 * gone, never answered "nothing held".
 */
export type SubjectAccessAnswer =
  | { readonly kind: 'not-ours' }
  | { readonly kind: 'nothing-held' }
  | {
      readonly kind: 'content';
      readonly crn: string;
      /** Absent when the store keeps no copies; null when it keeps copies but none of this crn. */
      readonly case?: HeldCase | null;
      readonly disclosures: DisclosureList;
    };

/** The case as held, or null when none is: each part read as stored, for nobody's view but the person's. */
async function heldCase(cases: CaseRepository, crn: Crn, deadline?: Deadline): Promise<HeldCase | null> {
  const readFor = { onBehalfOf: null, deadline };
  const [personalDetails, homeOfficeInterest, communityManager, riskScores] = await Promise.all([
    cases.findPersonalDetails(crn, readFor),
    cases.findHomeOfficeInterest(crn, readFor),
    cases.findCommunityManager(crn, readFor),
    cases.findRiskScores(crn, readFor),
  ]);
  if (!personalDetails && !homeOfficeInterest && !communityManager && !riskScores) return null;
  return {
    personalDetails: personalDetails?.value ?? null,
    homeOfficeInterest: homeOfficeInterest?.value ?? null,
    communityManager: communityManager?.value.communityManager ?? null,
    riskScores: riskScores?.value ?? [],
  };
}

export async function getSubjectAccessRequest(
  deps: SubjectAccessDeps,
  request: SubjectAccessRequest,
  deadline?: Deadline,
): Promise<SubjectAccessAnswer> {
  const window = sarWindow(request.fromDate, request.toDate, deps.now());
  const { crn } = request;
  if (crn === undefined) {
    if (request.prn !== undefined && request.prn !== '') return { kind: 'not-ours' };
    throw new InvalidSubjectAccessRequestError('crn', 'crn is required (this service holds no data by prn)');
  }
  const held = deps.caseCopies === undefined ? undefined : await heldCase(deps.caseCopies, crn, deadline);
  const disclosures = await deps.disclosures.of(crn.value, window, deadline);
  if (!held && disclosures.count === 0 && disclosures.gaps.length === 0) return { kind: 'nothing-held' };
  return {
    kind: 'content',
    crn: crn.value,
    ...(held === undefined ? {} : { case: held }),
    disclosures,
  };
}
