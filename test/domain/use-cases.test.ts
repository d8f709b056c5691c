import { describe, expect, it } from 'vitest';
import type { CaseRead } from '../../src/domain/case-operations.js';
import { Crn } from '../../src/domain/crn.js';
import {
  CaseNotFoundError,
  CommunityManagerNotFoundError,
  LimitedAccessError,
} from '../../src/domain/errors.js';
import type { CaseRecord } from '../../src/domain/types.js';
import { type Answer, type CaseReader, CLIENT_AS_ITSELF } from '../../src/domain/use-cases/case-found.js';
import { getCase, getCaseText } from '../../src/domain/use-cases/get-case.js';
import { getCommunityManagerByCrn } from '../../src/domain/use-cases/get-community-manager.js';
import { getHomeOfficeInterest } from '../../src/domain/use-cases/get-home-office-interest.js';
import { getRiskScores } from '../../src/domain/use-cases/get-risk-scores.js';
import type { CaseRepository, Held } from '../../src/ports/case-repository.js';
import { CaseMother } from '../support/mothers.js';

/** A case repository over records held in a plain Map (not a CaseReader: the HTTP adapter's readerOf makes those): the domain needs nothing more. */
function repositoryOf(...records: CaseRecord[]): Required<CaseRepository> & { calls: string[] } {
  const byCrn = new Map(records.map((r) => [r.crn, r]));
  const calls: string[] = [];
  return {
    calls,
    async findPersonalDetails(crn) {
      calls.push(`details:${crn.value}`);
      return heldPart(crn, (r) => r.personalDetails);
    },
    async findPersonalDetailsText(crn) {
      calls.push(`text:${crn.value}`);
      return heldPart(crn, (r) => JSON.stringify(r.personalDetails));
    },
    async findHomeOfficeInterest(crn) {
      calls.push(`hoi:${crn.value}`);
      return heldPart(crn, (r) => r.homeOfficeInterest);
    },
    async findCommunityManager(crn) {
      calls.push(`cm:${crn.value}`);
      return heldPart(crn, (r) => ({ communityManager: r.communityManager }));
    },
    async findRiskScores(crn) {
      calls.push(`risk:${crn.value}`);
      return heldPart(crn, (r) => r.riskScores);
    },
  };
  function heldPart<T>(crn: Crn, of: (record: CaseRecord) => T): Held<T> | undefined {
    const record = byCrn.get(crn.value);
    return record && { value: of(record), limitedAccess: record.limitedAccess };
  }
}

/** The body of an answer. */
const bodyOf = async <T>(answer: Promise<Answer<T>>): Promise<T> => (await answer).body;

const full = CaseMother.full('X123456');
const minimal = CaseMother.minimal('A000001');
const noManager = CaseMother.withoutManager('A000002');
const repository = repositoryOf(full, minimal, noManager);

describe('getCase', () => {
  it('returns the personal details held for the crn', async () => {
    await expect(bodyOf(getCase({ repository }, Crn.parse('X123456')))).resolves.toEqual(
      full.personalDetails,
    );
    await expect(bodyOf(getCase({ repository }, Crn.parse('A000001')))).resolves.toEqual({
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
    const spy = repositoryOf(full);
    await getCase({ repository: spy }, Crn.parse('X123456'));
    expect(spy.calls).toEqual(['details:X123456']);
  });
});

describe('getHomeOfficeInterest', () => {
  it('returns exists and notes', async () => {
    await expect(bodyOf(getHomeOfficeInterest({ repository }, Crn.parse('X123456')))).resolves.toEqual({
      exists: true,
      notes: 'Liaise with the Home Office.',
    });
    await expect(bodyOf(getHomeOfficeInterest({ repository }, Crn.parse('A000001')))).resolves.toEqual({
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
    await expect(bodyOf(getCommunityManagerByCrn({ repository }, Crn.parse('X123456')))).resolves.toEqual({
      crn: 'X123456',
      communityManager: full.communityManager,
    });
  });

  it('returns a manager with only the required fields, optional ones null', async () => {
    const result = await bodyOf(getCommunityManagerByCrn({ repository }, Crn.parse('A000001')));
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

describe('limited access, decided by each case operation (every row of the table) and the stored-text read', () => {
  const limited = CaseMother.limited('L000001');
  const limitedNoManager = { ...CaseMother.limited('L000002'), communityManager: null };
  const endedExclusion = CaseMother.limited('L000003', {
    exclusions: [{ user: 'officer.a@probation.example', until: '2020-01-01T00:00:00Z' }],
    restriction: null,
  });
  const cases = repositoryOf(full, limited, limitedNoManager, endedExclusion);
  const deps = { repository: cases, now: () => new Date('2026-06-01T00:00:00Z') };
  const as = (user: string | null, limitedAccess: 'deny' | 'allow' = 'deny'): CaseReader => ({
    user,
    onBehalfOfToken: user && 'token',
    limitedAccess,
    withheld: [],
  });
  const page = { page: 1, perPage: 10 };
  const operations = {
    getCase: (crn: string, reader: CaseReader) => getCase(deps, Crn.parse(crn), reader),
    getCaseText: (crn: string, reader: CaseReader) => getCaseText(deps, Crn.parse(crn), reader),
    getHomeOfficeInterest: (crn: string, reader: CaseReader) =>
      getHomeOfficeInterest(deps, Crn.parse(crn), reader),
    getCommunityManagerByCrn: (crn: string, reader: CaseReader) =>
      getCommunityManagerByCrn(deps, Crn.parse(crn), reader),
    getRiskScores: (crn: string, reader: CaseReader) => getRiskScores(deps, Crn.parse(crn), page, reader),
  } satisfies Record<CaseRead | 'getCaseText', (crn: string, reader: CaseReader) => Promise<unknown>>;

  for (const [name, run] of Object.entries(operations)) {
    describe(name, () => {
      it('refuses an excluded user, and a user the restriction does not name, with the case message', async () => {
        await expect(run('L000001', as('officer.a@probation.example'))).rejects.toMatchObject({
          code: 'LIMITED_ACCESS',
          outcome: 'excluded',
          message: 'You are excluded from viewing this case.',
        });
        await expect(run('L000001', as('officer.z@probation.example'))).rejects.toMatchObject({
          code: 'LIMITED_ACCESS',
          outcome: 'restricted',
          message: 'This case is restricted.',
        });
      });

      it('answers a user on the list, and anyone once the only rule has ended', async () => {
        await expect(run('L000001', as('Officer.B@probation.example'))).resolves.toMatchObject({
          access: 'open',
        });
        await expect(run('L000003', as('officer.a@probation.example'))).resolves.toMatchObject({
          access: 'open',
        });
        await expect(run('L000003', as(null))).resolves.toMatchObject({ access: 'open' });
      });

      it('without a user: deny refuses, allow answers marked client-enforces; a case without rules is open', async () => {
        await expect(run('L000001', as(null, 'deny'))).rejects.toBeInstanceOf(LimitedAccessError);
        await expect(run('L000001', as(null, 'allow'))).resolves.toMatchObject({ access: 'client-enforces' });
        await expect(run('X123456', as(null, 'deny'))).resolves.toMatchObject({ access: 'open' });
      });

      it('an unknown crn is not found, never a refusal', async () => {
        await expect(run('Q000000', as('officer.a@probation.example'))).rejects.toBeInstanceOf(
          CaseNotFoundError,
        );
      });

      it('a client acting as itself with the defaults is refused (the default reader fails closed)', async () => {
        await expect(run('L000001', CLIENT_AS_ITSELF)).rejects.toBeInstanceOf(LimitedAccessError);
      });
    });
  }

  it('a limited case without a manager refuses an excluded user rather than saying it has no manager', async () => {
    await expect(
      getCommunityManagerByCrn(deps, Crn.parse('L000002'), as('officer.a@probation.example')),
    ).rejects.toBeInstanceOf(LimitedAccessError);
    await expect(
      getCommunityManagerByCrn(deps, Crn.parse('L000002'), as('officer.b@probation.example')),
    ).rejects.toBeInstanceOf(CommunityManagerNotFoundError);
  });

  it('the verified user and token go to the repository (for a store that decides itself), once per read', async () => {
    const seen: unknown[] = [];
    const spying = {
      findHomeOfficeInterest: async (crn: Crn, readFor?: unknown) => {
        seen.push(readFor);
        return cases.findHomeOfficeInterest(crn);
      },
    };
    await getHomeOfficeInterest(
      { repository: spying },
      Crn.parse('X123456'),
      as('officer.b@probation.example'),
    );
    await getHomeOfficeInterest({ repository: spying }, Crn.parse('X123456'), as(null));
    expect(seen).toEqual([
      { onBehalfOf: { email: 'officer.b@probation.example', token: 'token' } },
      { onBehalfOf: null },
    ]);
  });
});
