import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { upstreamStores } from '../../../src/adapters/upstream/store-kind.js';
import type { AuditRecord } from '../../../src/domain/audit/record.js';
import { CASE_OPERATIONS, CASE_READS, type CaseRead, casePath } from '../../../src/domain/case-operations.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import type { Opened } from '../../../src/ports/stores.js';
import { recordingLogger } from '../../support/http.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';
import { settingsOf, testContext } from '../../support/stores.js';

/**
 * An upstream answer whose `crn` field is there must name the crn asked for (issue 55, item 8;
 * decisions §17, §20), for each of the case reads, through the whole service: anything else
 * is a 502 `upstream-failed` whose log line says `crn-mismatch`, and neither the log nor the
 * audit record holds the body or the crn it named.
 */
const CRN = 'X123456';
const MANAGER = { name: { forename: 'Sam', surname: 'Example' }, pdu: 'North Wales' };

/** The body of each read's right answer under `crn`: a row of the table without one does not compile. */
const ANSWERS = {
  getCase: (crn: unknown) => ({ crn, disabilities: [] }),
  getHomeOfficeInterest: (crn: unknown) => ({ crn, exists: true }),
  getCommunityManagerByCrn: (crn: unknown) => ({ crn, communityManager: MANAGER }),
  getRiskScores: (crn: unknown) => ({ crn, data: [], pagination: { isLastPage: true } }),
} satisfies Record<CaseRead, (crn: unknown) => Record<string, unknown>>;

/** Every case read (the table's): its id, the path asked, and the body of a right answer under `crn`. */
const READS = CASE_OPERATIONS.map((row) => [row.id, casePath(row, CRN), ANSWERS[row.id]] as const);

let pki: TestPki;
let stub: Server;
let store: Opened<CaseRepository>;
let service: RunningTestService;
let key: string;
let token: string;
/** What the stand-in answers every path with, as JSON text. */
let answer = '{}';
const logger = recordingLogger();
const audited: AuditRecord[] = [];

beforeAll(async () => {
  pki = await makeTestPki();
  stub = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(answer);
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  const opened = await upstreamStores.cases?.open(
    `http://127.0.0.1:${(stub.address() as AddressInfo).port}`,
    {
      ...testContext,
      settings: { ...settingsOf(upstreamStores.settings), retries: 0 },
    },
  );
  if (!opened) throw new Error('no upstream store');
  store = opened;
  service = await startTestService(pki, {
    repository: store.value,
    logger,
    audit: { append: async (record) => void audited.push(record) },
  });
  await service.directory.saveClient(
    AccessMother.client('reader', {
      permissions: [...CASE_READS],
    }),
  );
  key = (await service.issueKey('reader')).key;
  token = await mintTestToken(pki, 'reader');
}, 30_000);
afterAll(async () => {
  await service?.close();
  await store?.close();
  stub?.closeAllConnections();
  await new Promise((resolve) => stub?.close(resolve));
  pki?.cleanup();
});
beforeEach(() => {
  logger.lines.length = 0;
  audited.length = 0;
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

describe.each(READS)('%s', (_read, path, body) => {
  it.each([
    ['null beside a health page', '{"crn":null,"status":"UP"}'],
    ['null beside the resource’s own answer', JSON.stringify(body(null))],
    ['a number', '{"crn":123}'],
    ['another crn', '{"crn":"OTHER1"}'],
    ['the crn in lower case', JSON.stringify(body(CRN.toLowerCase()))],
  ])(
    'a crn field that is %s: 502 upstream-failed, logged as crn-mismatch, neither body nor crn in the log or the audit record',
    async (_what, sent) => {
      answer = sent;
      const answered = await ask(path);
      expect(answered.status).toBe(502);
      expect((answered.json() as { type: string }).type).toBe('urn:case-read:problem:upstream-failed');
      const line = logger.lines.find((l) => l.message === 'upstream failure');
      expect(line?.fields).toMatchObject({ label: 'crn-mismatch' });
      expect(JSON.stringify(logger.lines)).not.toMatch(
        /X123456|x123456|OTHER1|\bUP\b|\b123\b|Sam|North Wales/,
      );
      expect(answered.text).not.toMatch(/x123456|OTHER1|\bUP\b|\b123\b/);
      expect(audited).toHaveLength(1);
      expect(audited[0]).toMatchObject({ crn: CRN, status: 502, problem: 'upstream-failed' });
      expect(JSON.stringify(audited[0])).not.toMatch(/x123456|OTHER1|\bUP\b|crn-mismatch|Sam|North Wales/);
    },
  );

  it('the crn asked for: 200', async () => {
    answer = JSON.stringify(body(CRN));
    const answered = await ask(path);
    expect(answered.status).toBe(200);
    expect(audited[0]).toMatchObject({ crn: CRN, status: 200, problem: null });
  });
});

describe('{}, a case with nothing held', () => {
  it('the case: 200, every field null or []', async () => {
    answer = '{}';
    const answered = await ask(`/case/${CRN}`);
    expect(answered.status).toBe(200);
    expect(answered.json()).toStrictEqual({
      preferredLanguage: null,
      personalCircumstances: [],
      disabilities: [],
      offenderPersonalityDisorder: null,
    });
  });
});
