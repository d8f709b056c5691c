import type { Crn } from '../../domain/crn.js';
import { deepFreeze } from '../../domain/freeze.js';
import type {
  CaseRecord,
  CommunityManager,
  HomeOfficeInterest,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
} from '../../domain/types.js';
import type { CaseRepository, Held } from '../../ports/case-repository.js';

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

  /** One part of the case held under `crn`, with its rules. */
  private part<T>(crn: Crn, of: (record: CaseRecord) => T): Held<T> | undefined {
    const record = this.byCrn.get(crn.value);
    return record && { value: of(record), limitedAccess: record.limitedAccess };
  }

  async findPersonalDetails(crn: Crn): Promise<Held<PersonalDetailsAndCircumstances> | undefined> {
    return this.part(crn, (record) => record.personalDetails);
  }

  async findHomeOfficeInterest(crn: Crn): Promise<Held<HomeOfficeInterest> | undefined> {
    return this.part(crn, (record) => record.homeOfficeInterest);
  }

  async findRiskScores(crn: Crn): Promise<Held<RiskPredictorScore[]> | undefined> {
    return this.part(crn, (record) => record.riskScores);
  }

  async findCommunityManager(
    crn: Crn,
  ): Promise<Held<{ communityManager: CommunityManager | null }> | undefined> {
    return this.part(crn, (record) => ({ communityManager: record.communityManager }));
  }
}
