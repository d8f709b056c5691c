import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES } from '../../../src/adapters/upstream/settings.js';
import { upstreamStores } from '../../../src/adapters/upstream/store-kind.js';
import { CASE_OPERATIONS, CASE_READS, type CaseRead, casePath } from '../../../src/domain/case-operations.js';
import type { CaseRecord } from '../../../src/domain/types.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import type { Opened } from '../../../src/ports/stores.js';
import { fixtureCases } from '../../support/fixtures.js';
import { fixtureApp, recordingLogger, servedDocument } from '../../support/http.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { OpenApiValidator } from '../../support/openapi-validator.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';
import {
  type RealUpstream,
  recordedAnswers,
  recordedBody,
  startRealUpstream,
} from '../../support/real-upstream.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';
import { testContext } from '../../support/stores.js';

/**
 * The service with `CASE_STORE=https://…` in front of a stand-in that answers as the real
 * services do (null fields left out, unknown fields, 404 `{ status, message }`, the gateway's
 * risk scores: levels only, UK local times): every answer is the contract's, checked against
 * the OpenAPI document with ajv.
 */
const recorded = recordedAnswers();
const NOT_FOUND_MESSAGE = (recordedBody('probation-not-found') as { message: string }).message;
const gatewayScores = recordedBody('gateway-risk-scores') as { data: Record<string, unknown>[] };

/** The recorded risk scores for `crn`, with the first score's field changed. */
function badScores(crn: string, change: (score: Record<string, unknown>) => void) {
  const body = structuredClone(gatewayScores);
  change(body.data[0] as Record<string, unknown>);
  return { path: `/v1/persons/${crn}/risks/scores`, status: 200, body };
}

/** A recorded body as the upstream would send it under `crn` (absent: no crn at all). */
function answerFor(crn: string | undefined, name: string) {
  const { crn: _recorded, ...rest } = recordedBody(name) as Record<string, unknown>;
  return crn === undefined ? rest : { crn, ...rest };
}

let pki: TestPki;
let upstream: RealUpstream;
let store: Opened<CaseRepository>;
let service: RunningTestService;
let validator: OpenApiValidator;
let key: string;
let token: string;
const logger = recordingLogger();

beforeAll(async () => {
  pki = await makeTestPki();
  upstream = await startRealUpstream({
    records: fixtureCases(),
    recorded: [
      ...Object.values(recorded),
      badScores('R000002', (s) => {
        s.generalPredictor = { scoreLevel: 'EXTREME-7731' };
      }),
      badScores('R000003', (s) => {
        s.completedDate = 'Tuesday-7731';
      }),
      // Not JSON at all, though it says it is.
      { path: '/case/R000004', status: 200, body: 7731 },
      // Not the case asked for (decisions §17): a health page, an error body, another person's.
      { path: '/case/R000005', status: 200, body: { status: 'UP' } },
      { path: '/case/R000006', status: 200, body: { error: 'Not Found', path: '/health' } },
      {
        path: '/case/R000007/community-manager',
        status: 200,
        body: answerFor('R000001', 'probation-community-manager'),
      },
      { path: '/case/R000008', status: 200, body: answerFor('R000001', 'probation-case') },
      {
        path: '/case/R000009/community-manager',
        status: 200,
        body: answerFor(undefined, 'probation-community-manager'),
      },
      // A case with nothing held: every field of the contract is optional.
      { path: '/case/R000010', status: 200, body: {} },
      { path: '/case/R000011', status: 200, body: { crn: 'R000011', riskFlags: ['unknown here'] } },
    ],
    shapes: { gatewayIn: 'Europe/London' },
    tls: { cert: `${pki.server.certPem}\n${pki.ca.certPem}`, key: pki.server.keyPem },
  });
  const opened = await upstreamStores.cases?.open(upstream.url, {
    ...testContext,
    settings: {
      connections: 4,
      timeoutMs: 5000,
      retries: 0,
      timeZone: 'Europe/London',
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      tlsCaFile: pki.write('upstream-ca.pem', pki.ca.certPem),
    },
  });
  if (!opened) throw new Error('no upstream store');
  store = opened;
  service = await startTestService(pki, { repository: store.value, logger });
  await service.directory.saveClient(
    AccessMother.client('reader', {
      permissions: [...CASE_READS],
    }),
  );
  key = (await service.issueKey('reader')).key;
  token = await mintTestToken(pki, 'reader');
  validator = new OpenApiValidator(await servedDocument(fixtureApp()));
}, 30_000);
afterAll(async () => {
  await service?.close();
  await store?.close();
  await upstream?.close();
  pki?.cleanup();
});

async function ask(path: string) {
  const reader = await pki.client('reader');
  return httpsRequest(`${service.url}${path}`, {
    ca: pki.ca.certPem,
    cert: reader.certPem,
    key: reader.keyPem,
    headers: { 'x-api-key': key, authorization: `Bearer ${token}` },
  });
}

/**
 * What each read is asked beyond its path, and the problem type of its 404 for a fixture that
 * holds none of what it reads (`null`: a 200 for every held fixture). A row of the table
 * without its own does not compile.
 */
const ASKED: Record<CaseRead, { query: string; notHeld: (record: CaseRecord) => string | null }> = {
  getCase: { query: '', notHeld: () => null },
  getHomeOfficeInterest: { query: '', notHeld: () => null },
  getCommunityManagerByCrn: {
    query: '',
    notHeld: (record) => (record.communityManager === null ? 'community-manager-not-found' : null),
  },
  getRiskScores: { query: '?perPage=100', notHeld: () => null },
};

/** Every case read (the table's): its OpenAPI template, its path for a crn, and when it is a 404. */
const OPERATIONS = CASE_OPERATIONS.map(
  (row) =>
    [
      row.path,
      (crn: string) => `${casePath(row, crn)}${ASKED[row.id].query}`,
      ASKED[row.id].notHeld,
    ] as const,
);

describe('CASE_STORE=https://… in front of the real services’ shapes', () => {
  it('answers every case read 200 in the contract’s shape, from the recorded bodies', async () => {
    for (const [template, path] of OPERATIONS) {
      const answer = await ask(path('R000001'));
      expect(answer.status, template).toBe(200);
      expect(
        validator.responseErrors(template, 'get', 200, 'application/json', answer.json()),
        template,
      ).toEqual([]);
    }
  });

  it('risk scores: levels kept, withheld scores null, local times with their offset, newest first by instant, no assessmentVersion', async () => {
    const answer = await ask('/v1/persons/R000001/risks/scores');
    const { data } = answer.json() as { data: Record<string, Record<string, unknown>>[] };
    expect(data.map((s) => s.completedDate)).toEqual([
      '2026-01-16T16:22:54+00:00',
      '2025-10-26T01:10:00+00:00',
      // Later on the wall clock than 01:10, earlier in time: the first 01:30 of that night.
      '2025-10-26T01:30:00+01:00',
      '2025-07-01T10:00:00+01:00',
    ]);
    expect(data[0]?.generalPredictor).toStrictEqual({ scoreLevel: 'HIGH', score: null });
    expect(data[0]?.sexualPredictor).toStrictEqual({
      indecentScoreLevel: 'LOW',
      contactScoreLevel: 'LOW',
      indecentScore: null,
      contactScore: null,
    });
    expect(answer.text).not.toContain('assessmentVersion');
  });

  it('every fixture, read through the gateway’s shapes: 200 or 404 as held, valid, the same instants and levels', async () => {
    // Limited cases are the upstream's to refuse (another suite): the others are read here.
    for (const record of fixtureCases().filter((r) => r.limitedAccess === null)) {
      for (const [template, path, notHeld] of OPERATIONS) {
        const answer = await ask(path(record.crn));
        const problem = notHeld(record);
        const expected = problem === null ? 200 : 404;
        expect(answer.status, `${template} ${record.crn}`).toBe(expected);
        if (problem === null) {
          expect(validator.responseErrors(template, 'get', 200, 'application/json', answer.json())).toEqual(
            [],
          );
        } else {
          expect((answer.json() as { type: string }).type).toBe(`urn:case-read:problem:${problem}`);
        }
      }
      const { data } = (await ask(`/v1/persons/${record.crn}/risks/scores?perPage=100`)).json() as {
        data: { completedDate: string; generalPredictor: { scoreLevel: string; score: null } }[];
      };
      const held = [...record.riskScores].sort(
        (a, b) => Date.parse(b.completedDate) - Date.parse(a.completedDate),
      );
      expect(data.map((s) => Date.parse(s.completedDate))).toEqual(
        held.map((s) => Date.parse(s.completedDate)),
      );
      expect(data.map((s) => s.generalPredictor)).toEqual(
        held.map((s) => ({ scoreLevel: s.generalPredictor.scoreLevel, score: null })),
      );
    }
  });

  it('an unknown crn is our own 404; the upstream’s 404 text is not in it', async () => {
    for (const [, path] of OPERATIONS) {
      const answer = await ask(path('R000404'));
      expect(answer.status).toBe(404);
      expect((answer.json() as { type: string }).type).toBe('urn:case-read:problem:case-not-found');
      expect(answer.text).not.toContain(NOT_FOUND_MESSAGE);
      expect(answer.text).not.toContain('PCS-0404');
    }
  });

  it.each([
    [
      'R000002',
      '/v1/persons/R000002/risks/scores',
      'data[0].generalPredictor.scoreLevel',
      /^expected one of LOW, /,
    ],
    ['R000003', '/v1/persons/R000003/risks/scores', 'data[0].completedDate', /^not an ISO 8601 datetime$/],
    ['R000004', '/case/R000004', '(body)', /^expected object$/],
  ])(
    'what still does not fit (%s) is a 502 upstream-failed; the log names the field and reason, never the value',
    async (_crn, path, field, reason) => {
      logger.lines.length = 0;
      const answer = await ask(path);
      expect(answer.status).toBe(502);
      expect((answer.json() as { type: string }).type).toBe('urn:case-read:problem:upstream-failed');
      expect(answer.text).not.toContain('7731');
      const line = logger.lines.find((l) => l.message === 'upstream failure');
      expect(line?.fields).toMatchObject({ label: 'invalid-body', field });
      expect(String(line?.fields.reason)).toMatch(reason);
      expect(JSON.stringify(logger.lines)).not.toContain('7731');
    },
  );
});

describe('an answer that is not the case asked for (decisions §17)', () => {
  it.each([
    ['a health page', '/case/R000005', 'unrecognised-answer'],
    ['an error body', '/case/R000006', 'unrecognised-answer'],
    ["another person's community manager", '/case/R000007/community-manager', 'crn-mismatch'],
    ["another person's case", '/case/R000008', 'crn-mismatch'],
  ])(
    '%s is a 502 upstream-failed; the log says why and names neither crn nor body',
    async (_what, path, label) => {
      logger.lines.length = 0;
      const answer = await ask(path);
      expect(answer.status).toBe(502);
      expect((answer.json() as { type: string }).type).toBe('urn:case-read:problem:upstream-failed');
      const line = logger.lines.find((l) => l.message === 'upstream failure');
      expect(line?.fields).toMatchObject({ label });
      expect(JSON.stringify(logger.lines)).not.toMatch(/R0000\d\d|\bUP\b|Not Found|Sam|Example/);
      expect(answer.text).not.toMatch(/R000001|\bUP\b|Not Found/);
    },
  );

  it('a community manager answer without its crn is a 502: the contract requires it', async () => {
    logger.lines.length = 0;
    const answer = await ask('/case/R000009/community-manager');
    expect(answer.status).toBe(502);
    const line = logger.lines.find((l) => l.message === 'upstream failure');
    expect(line?.fields).toMatchObject({ label: 'invalid-body', field: 'crn', reason: 'expected string' });
  });

  it.each([
    ['{}', '/case/R000010'],
    ['its crn and fields unknown here', '/case/R000011'],
  ])('%s is a case with nothing held: 200', async (_what, path) => {
    const answer = await ask(path);
    expect(answer.status).toBe(200);
    expect(answer.json()).toStrictEqual({
      preferredLanguage: null,
      personalCircumstances: [],
      disabilities: [],
      offenderPersonalityDisorder: null,
    });
  });
});

describe('a body that is not JSON', () => {
  it('is a 502 whose log line says so, to every case read', async () => {
    // A stand-in speaking broken JSON where JSON was promised.
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"exists": tru');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const opened = await upstreamStores.cases?.open(`http://127.0.0.1:${port}`, {
      ...testContext,
      settings: {
        connections: 1,
        timeoutMs: 2000,
        retries: 0,
        timeZone: 'Europe/London',
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      },
    });
    if (!opened) throw new Error('no upstream store');
    const local = recordingLogger();
    const front = await startTestService(pki, { repository: opened.value, logger: local });
    try {
      await front.directory.saveClient(AccessMother.client('reader', { permissions: [...CASE_READS] }));
      const reader = await pki.client('reader');
      const apiKey = (await front.issueKey('reader')).key;
      for (const row of CASE_OPERATIONS) {
        local.lines.length = 0;
        const answer = await httpsRequest(`${front.url}${casePath(row, 'X123456')}`, {
          ca: pki.ca.certPem,
          cert: reader.certPem,
          key: reader.keyPem,
          headers: { 'x-api-key': apiKey, authorization: `Bearer ${token}` },
        });
        expect(answer.status, row.id).toBe(502);
        expect(answer.text, row.id).not.toContain('tru');
        expect(local.lines.find((l) => l.message === 'upstream failure')?.fields, row.id).toMatchObject({
          field: '(body)',
          reason: 'not JSON',
        });
      }
    } finally {
      await front.close();
      await opened.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
