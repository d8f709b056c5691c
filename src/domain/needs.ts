import type { Crn } from './crn.js';
import type { CommunityManager, HomeOfficeInterest, PersonalDetailsAndCircumstances } from './types.js';

/**
 * What the use cases need from the outside, said in the domain's own terms. The domain
 * imports nothing outside `src/domain`; `src/ports` builds the adapter-facing interfaces on
 * these, and adapters implement the ports.
 *
 * Every method answers `undefined` when no case is held for the crn.
 */
export interface CaseReader {
  findPersonalDetails(crn: Crn): Promise<PersonalDetailsAndCircumstances | undefined>;
  findHomeOfficeInterest(crn: Crn): Promise<HomeOfficeInterest | undefined>;
  /**
   * `{ communityManager: null }` when the case is held but has no active community manager;
   * `undefined` when no case is held.
   */
  findCommunityManager(crn: Crn): Promise<{ communityManager: CommunityManager | null } | undefined>;
}
