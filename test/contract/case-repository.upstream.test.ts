import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/adapters/upstream/settings.js';
import { upstreamStores } from '../../src/adapters/upstream/store-kind.js';
import { Crn } from '../../src/domain/crn.js';
import type { CaseRepository } from '../../src/ports/case-repository.js';
import type { Opened } from '../../src/ports/stores.js';
import { type RealUpstream, recordedAnswers, startRealUpstream } from '../support/real-upstream.js';
import { testContext } from '../support/stores.js';
import { startUpstreamInstance, upstreamSettings } from '../support/upstream.js';
import { describeCaseRepositoryContract } from './case-repository.contract.js';

const plainSettings = {
  connections: 4,
  timeoutMs: 5000,
  retries: 2,
  timeZone: 'Europe/London',
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
};

async function openUpstream(url: string, settings = plainSettings): Promise<Opened<CaseRepository>> {
  const opened = await upstreamStores.cases?.open(url, { ...testContext, settings });
  if (!opened) throw new Error('the upstream store cannot hold cases');
  return opened;
}

/** Why the upstream kind is not put through some clauses of the store error convention. */
const UPSTREAM_CLAUSES = {
  damage:
    'its records are the system of record’s: an answer it cannot read is a 502 (UpstreamFailedError), in test/adapters/upstream/faults.test.ts',
  openMissing:
    'it opens without a call; an upstream that cannot be reached is a 502, then a failing ping (test/adapters/upstream/faults.test.ts)',
};

/** The upstream store reading `upstream`; the stand-in is closed after it. */
async function readingFrom(upstream: { url: string; close(): Promise<void> }, settings = plainSettings) {
  const opened = await openUpstream(upstream.url, settings);
  return {
    repository: opened.value,
    ping: () => opened.ping(),
    close: () => opened.close(),
    cleanup: () => upstream.close(),
    damage: UPSTREAM_CLAUSES.damage,
  };
}

// The upstream is a second instance of this service, over mutual TLS with an API key and a
// bearer token, serving the records from SQLite.
describeCaseRepositoryContract(
  'upstream',
  async (records) => {
    const upstream = await startUpstreamInstance(records);
    return readingFrom(upstream, upstreamSettings(upstream));
  },
  { decidesLimitedAccess: true, openMissing: UPSTREAM_CLAUSES.openMissing },
);

// The upstream answers as the probation service does: null fields left out, fields this
// contract does not have added, every 404 `{ status, message }` (no problem type, so a case
// with no manager is told from an unknown crn by asking for the case). The contract holds.
describeCaseRepositoryContract(
  'upstream, the probation service’s shapes',
  async (records) => readingFrom(await startRealUpstream({ records })),
  { decidesLimitedAccess: true, openMissing: UPSTREAM_CLAUSES.openMissing },
);

describe('the upstream store reading bodies recorded in the real services’ shapes', () => {
  const recorded = recordedAnswers();
  let upstream: RealUpstream;
  let store: Opened<CaseRepository>;
  const crn = Crn.parse('R000001');

  beforeAll(async () => {
    upstream = await startRealUpstream({ recorded: Object.values(recorded) });
    store = await openUpstream(upstream.url);
  });
  afterAll(async () => {
    await store?.close();
    await upstream?.close();
  });

  it('the case: omitted fields null, an absent list [], a local updatedAt given its offset, unknown fields dropped', async () => {
    expect((await store.value.findPersonalDetails(crn))?.value).toStrictEqual({
      preferredLanguage: { code: 'WEL', description: 'Welsh' },
      personalCircumstances: [
        {
          type: { code: 'E', description: 'Employment' },
          subType: { code: 'E02', description: 'Part-time' },
          updatedAt: '2025-11-03T09:12:44.318+00:00',
        },
        {
          type: { code: 'A', description: 'Accommodation' },
          subType: { code: 'A02', description: 'Settled' },
          updatedAt: '2025-07-14T08:00:00+01:00',
        },
      ],
      disabilities: [],
      offenderPersonalityDisorder: null,
    });
  });

  it('home office interest: absent notes are null', async () => {
    expect((await store.value.findHomeOfficeInterest(crn))?.value).toStrictEqual({
      exists: true,
      notes: null,
    });
  });

  it('the community manager: absent fields null, the team and code dropped', async () => {
    expect((await store.value.findCommunityManager(crn))?.value).toStrictEqual({
      communityManager: {
        name: { forename: 'Sam', middleName: null, surname: 'Example' },
        pdu: 'North Wales',
        jobRole: null,
        emailAddress: 'sam.example@probation.example',
        officeName: null,
        teamPhoneNumber: null,
      },
    });
  });

  it('risk scores: levels kept, withheld scores null, local dates given the offset in force, no assessmentVersion', async () => {
    const scores = (await store.value.findRiskScores(crn))?.value ?? [];
    // As the upstream listed them: the use case orders them by instant.
    expect(scores.map((s) => s.completedDate)).toEqual([
      '2025-07-01T10:00:00+01:00',
      '2026-01-16T16:22:54+00:00',
      // Twice on the wall clock that night: the earlier, summer-time instant.
      '2025-10-26T01:30:00+01:00',
      '2025-10-26T01:10:00+00:00',
    ]);
    expect(scores[1]).toStrictEqual({
      completedDate: '2026-01-16T16:22:54+00:00',
      assessmentStatus: 'COMPLETE',
      generalPredictor: { scoreLevel: 'HIGH', score: null },
      violencePredictor: { scoreLevel: 'MEDIUM', score: null },
      groupReconviction: { scoreLevel: 'HIGH', score: null },
      riskOfSeriousRecidivism: { scoreLevel: 'MEDIUM', score: null },
      sexualPredictor: {
        indecentScoreLevel: 'LOW',
        contactScoreLevel: 'LOW',
        indecentScore: null,
        contactScore: null,
      },
    });
    expect(scores[2]?.riskOfSeriousRecidivism).toStrictEqual({ scoreLevel: null, score: null });
    expect(JSON.stringify(scores)).not.toContain('assessmentVersion');
  });

  it('an unknown crn, answered 404 { status, message }, is not held', async () => {
    const unknown = Crn.parse('R000404');
    expect(await store.value.findPersonalDetails(unknown)).toBeUndefined();
    expect(await store.value.findCommunityManager(unknown)).toBeUndefined();
    expect(await store.value.findRiskScores(unknown)).toBeUndefined();
  });
});
