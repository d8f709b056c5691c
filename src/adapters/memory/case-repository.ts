import type { Crn } from '../../domain/crn.js';
import { deepFreeze } from '../../domain/freeze.js';
import type {
  CaseRecord,
  CommunityManager,
  HomeOfficeInterest,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
} from '../../domain/types.js';
import type { CaseRepository } from '../../ports/case-repository.js';

/**
 * Cases held in memory, from fixtures or test data. Records are deep-frozen on the way in,
 * so no caller can change what the next caller reads.
 */
export class InMemoryCaseRepository implements CaseRepository {
  private readonly byCrn = new Map<string, CaseRecord>();

  constructor(records: Iterable<CaseRecord>) {
    for (const record of records) {
      if (this.byCrn.has(record.crn)) throw new Error(`duplicate crn in case set: ${record.crn}`);
      this.byCrn.set(record.crn, deepFreeze(structuredClone(record)));
    }
  }

  get size(): number {
    return this.byCrn.size;
  }

  async findPersonalDetails(crn: Crn): Promise<PersonalDetailsAndCircumstances | undefined> {
    return this.byCrn.get(crn.value)?.personalDetails;
  }

  async findHomeOfficeInterest(crn: Crn): Promise<HomeOfficeInterest | undefined> {
    return this.byCrn.get(crn.value)?.homeOfficeInterest;
  }

  async findRiskScores(crn: Crn): Promise<RiskPredictorScore[] | undefined> {
    return this.byCrn.get(crn.value)?.riskScores;
  }

  async findCommunityManager(crn: Crn): Promise<{ communityManager: CommunityManager | null } | undefined> {
    const record = this.byCrn.get(crn.value);
    return record === undefined ? undefined : { communityManager: record.communityManager };
  }
}
