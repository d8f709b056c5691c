import { describe, expect, it } from 'vitest';
import { Crn } from '../../src/domain/crn.js';
import { CaseNotFoundError, CommunityManagerNotFoundError } from '../../src/domain/errors.js';
import type { CaseRecord } from '../../src/domain/types.js';
import { getCase } from '../../src/domain/use-cases/get-case.js';
import { getCommunityManagerByCrn } from '../../src/domain/use-cases/get-community-manager.js';
import { getHomeOfficeInterest } from '../../src/domain/use-cases/get-home-office-interest.js';
import type { CaseRepository } from '../../src/ports/case-repository.js';
import { CaseMother } from '../support/mothers.js';

/** A reader over records held in a plain Map: the domain needs nothing more. */
function readerOf(...records: CaseRecord[]): CaseRepository & { calls: string[] } {
  const byCrn = new Map(records.map((r) => [r.crn, r]));
  const calls: string[] = [];
  return {
    calls,
    async findPersonalDetails(crn) {
      calls.push(`details:${crn.value}`);
      return byCrn.get(crn.value)?.personalDetails;
    },
    async findHomeOfficeInterest(crn) {
      calls.push(`hoi:${crn.value}`);
      return byCrn.get(crn.value)?.homeOfficeInterest;
    },
    async findCommunityManager(crn) {
      calls.push(`cm:${crn.value}`);
      const record = byCrn.get(crn.value);
      return record && { communityManager: record.communityManager };
    },
    async findRiskScores(crn) {
      calls.push(`risk:${crn.value}`);
      return byCrn.get(crn.value)?.riskScores;
    },
  };
}

const full = CaseMother.full('X123456');
const minimal = CaseMother.minimal('A000001');
const noManager = CaseMother.withoutManager('A000002');
const repository = readerOf(full, minimal, noManager);

describe('getCase', () => {
  it('returns the personal details held for the crn', async () => {
    await expect(getCase({ repository }, Crn.parse('X123456'))).resolves.toEqual(full.personalDetails);
    await expect(getCase({ repository }, Crn.parse('A000001'))).resolves.toEqual({
      preferredLanguage: null,
      personalCircumstances: [],
      disabilities: [],
      offenderPersonalityDisorder: null,
    });
  });

  it('throws CaseNotFoundError for an unknown crn', async () => {
    const error = await getCase({ repository }, Crn.parse('Q000000')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CaseNotFoundError);
    expect((error as CaseNotFoundError).code).toBe('CASE_NOT_FOUND');
    expect((error as CaseNotFoundError).crn).toBe('Q000000');
  });

  it('asks the repository once, for that crn only', async () => {
    const spy = readerOf(full);
    await getCase({ repository: spy }, Crn.parse('X123456'));
    expect(spy.calls).toEqual(['details:X123456']);
  });
});

describe('getHomeOfficeInterest', () => {
  it('returns exists and notes', async () => {
    await expect(getHomeOfficeInterest({ repository }, Crn.parse('X123456'))).resolves.toEqual({
      exists: true,
      notes: 'Liaise with the Home Office.',
    });
    await expect(getHomeOfficeInterest({ repository }, Crn.parse('A000001'))).resolves.toEqual({
      exists: false,
      notes: null,
    });
  });

  it('throws CaseNotFoundError for an unknown crn', async () => {
    await expect(getHomeOfficeInterest({ repository }, Crn.parse('Q000000'))).rejects.toBeInstanceOf(
      CaseNotFoundError,
    );
  });
});

describe('getCommunityManagerByCrn', () => {
  it('returns the crn with the manager', async () => {
    await expect(getCommunityManagerByCrn({ repository }, Crn.parse('X123456'))).resolves.toEqual({
      crn: 'X123456',
      communityManager: full.communityManager,
    });
  });

  it('returns a manager with only the required fields, optional ones null', async () => {
    const result = await getCommunityManagerByCrn({ repository }, Crn.parse('A000001'));
    expect(result.communityManager).toEqual({
      name: { forename: 'Sam', middleName: null, surname: 'Minimal' },
      pdu: 'Synthetic South PDU',
      jobRole: null,
      emailAddress: null,
      officeName: null,
      teamPhoneNumber: null,
    });
  });

  it('throws CommunityManagerNotFoundError for a held case with no active manager', async () => {
    const error = await getCommunityManagerByCrn({ repository }, Crn.parse('A000002')).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CommunityManagerNotFoundError);
    expect((error as CommunityManagerNotFoundError).code).toBe('COMMUNITY_MANAGER_NOT_FOUND');
  });

  it('throws CaseNotFoundError, not the manager error, for an unknown crn', async () => {
    await expect(getCommunityManagerByCrn({ repository }, Crn.parse('Q000000'))).rejects.toBeInstanceOf(
      CaseNotFoundError,
    );
  });
});

describe('a failing store', () => {
  it('lets the store error through unchanged: it is not "not found"', async () => {
    const failure = new Error('disk I/O error');
    const broken: CaseRepository = {
      findPersonalDetails: async () => Promise.reject(failure),
      findHomeOfficeInterest: async () => Promise.reject(failure),
      findCommunityManager: async () => Promise.reject(failure),
      findRiskScores: async () => Promise.reject(failure),
    };
    await expect(getCase({ repository: broken }, Crn.parse('X123456'))).rejects.toBe(failure);
    await expect(getHomeOfficeInterest({ repository: broken }, Crn.parse('X123456'))).rejects.toBe(failure);
    await expect(getCommunityManagerByCrn({ repository: broken }, Crn.parse('X123456'))).rejects.toBe(
      failure,
    );
  });
});
