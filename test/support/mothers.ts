import type { LimitedAccess } from '../../src/domain/access/limited-access.js';
import type { ApiKeyRecord, Client } from '../../src/domain/access/model.js';
import { CASE_READS } from '../../src/domain/case-operations.js';
import type {
  CaseRecord,
  CommunityManager,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
  ScoreLevel,
} from '../../src/domain/types.js';

/**
 * Object Mothers: named, valid case records for tests, built fresh on every call so no
 * test can change another's data. Override any part with `with…` helpers.
 */
export const CaseMother = {
  fullManager(overrides: Partial<CommunityManager> = {}): CommunityManager {
    return {
      name: { forename: 'Alex', middleName: 'Jordan', surname: 'Testperson' },
      pdu: 'Synthetic North PDU',
      jobRole: 'Probation Practitioner',
      emailAddress: 'alex.testperson@probation.example',
      officeName: 'Synthetic House',
      teamPhoneNumber: '01632 960001',
      ...overrides,
    };
  },

  fullDetails(): PersonalDetailsAndCircumstances {
    return {
      preferredLanguage: { code: 'ENG', description: 'English' },
      personalCircumstances: [
        {
          type: { code: 'EMP', description: 'Employment' },
          subType: { code: 'FT', description: 'Full-time Employed' },
          updatedAt: '2024-03-01T10:15:00+00:00',
        },
        {
          type: { code: 'ACC', description: 'Accommodation' },
          subType: { code: 'SET', description: 'Settled Accommodation' },
          updatedAt: '2024-06-12T09:00:00+01:00',
        },
      ],
      disabilities: [
        { type: { code: 'VI', description: 'Visual Impairment' }, updatedAt: '2022-05-04T08:30:00+01:00' },
      ],
      offenderPersonalityDisorder: { status: { code: 'OPD_IN', description: 'Screened in' } },
    };
  },

  /** Every field present. */
  full(crn = 'X123456'): CaseRecord {
    return {
      crn,
      personalDetails: CaseMother.fullDetails(),
      homeOfficeInterest: { exists: true, notes: 'Liaise with the Home Office.' },
      communityManager: CaseMother.fullManager(),
      riskScores: [
        CaseMother.riskScore('2024-05-01T10:00:00+01:00'),
        CaseMother.riskScore('2023-01-15T09:30:00+00:00', 'LOW'),
      ],
      limitedAccess: null,
    };
  },

  riskScore(
    completedDate: string,
    level: ScoreLevel = 'MEDIUM',
    score: number | null = 42.5,
  ): RiskPredictorScore {
    return {
      completedDate,
      assessmentStatus: 'COMPLETE',
      generalPredictor: { scoreLevel: level, score },
      violencePredictor: { scoreLevel: level, score },
      groupReconviction: { scoreLevel: level, score: null },
      riskOfSeriousRecidivism: { scoreLevel: level, score: 3.2 },
      sexualPredictor: {
        indecentScoreLevel: 'NOT_APPLICABLE',
        contactScoreLevel: 'NOT_APPLICABLE',
        indecentScore: null,
        contactScore: null,
      },
    };
  },

  /** Every optional value null, every list empty, a manager with only the required fields. */
  minimal(crn = 'A000001'): CaseRecord {
    return {
      crn,
      personalDetails: {
        preferredLanguage: null,
        personalCircumstances: [],
        disabilities: [],
        offenderPersonalityDisorder: null,
      },
      homeOfficeInterest: { exists: false, notes: null },
      communityManager: {
        name: { forename: 'Sam', middleName: null, surname: 'Minimal' },
        pdu: 'Synthetic South PDU',
        jobRole: null,
        emailAddress: null,
        officeName: null,
        teamPhoneNumber: null,
      },
      riskScores: [],
      limitedAccess: null,
    };
  },

  /**
   * A full case with limited-access rules: an exclusion of officer.a and a restriction to
   * officer.b and officer.c, both without end, with the case's own messages.
   */
  limited(crn = 'L000001', overrides: Partial<LimitedAccess> = {}): CaseRecord {
    return {
      ...CaseMother.full(crn),
      limitedAccess: {
        exclusions: [{ user: 'officer.a@probation.example', until: null }],
        exclusionMessage: 'You are excluded from viewing this case.',
        restriction: { users: ['officer.b@probation.example', 'officer.c@probation.example'], until: null },
        restrictionMessage: 'This case is restricted.',
        ...overrides,
      },
    };
  },

  /** A held case with no active community manager. */
  withoutManager(crn = 'A000002'): CaseRecord {
    return { ...CaseMother.full(crn), communityManager: null };
  },
};

/** Object Mothers for the access directory. */
export const AccessMother = {
  client(id = 'client-a', overrides: Partial<Client> = {}): Client {
    return {
      id,
      permissions: [...CASE_READS],
      suspended: false,
      rateLimit: null,
      queueArn: null,
      roleArn: null,
      onBehalfOf: { mode: 'forbidden', issuer: null, jwks: null, audience: null, emailClaim: 'email' },
      redact: [],
      limitedAccess: 'deny',
      ...overrides,
    };
  },

  key(id: string, clientId = 'client-a', overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
    return {
      id,
      clientId,
      secretHash: `hash-of-${id}`,
      createdAt: new Date('2026-01-01T00:00:00Z'),
      expiresAt: null,
      revokedAt: null,
      ...overrides,
    };
  },
};
