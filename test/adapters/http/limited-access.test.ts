import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LimitedAccessSetting } from '../../../src/domain/access/limited-access.js';
import type { AuditRecord } from '../../../src/domain/audit/record.js';
import { CASE_OPERATIONS, CASE_READS, casePath } from '../../../src/domain/case-operations.js';
import { fixtureApp, servedDocument } from '../../support/http.js';
import { httpsRequest } from '../../support/https-client.js';
import { makeIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider.js';
import { AccessMother, CaseMother } from '../../support/mothers.js';
import { OpenApiValidator } from '../../support/openapi-validator.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';
import { sqliteCaseStoreOf } from '../../support/sqlite.js';

// Limited access cases (decisions §8), through the real mutual-TLS listener, over a SQLite
// case store (which offers the stored-text fast path for getCase: it must decide too).
const EXCLUDED = 'officer.a@probation.example';
const NAMED = 'officer.b@probation.example';
const OTHER_NAMED = 'officer.c@probation.example';
const STRANGER = 'officer.z@probation.example';

const cases = [
  CaseMother.full('X123456'),
  CaseMother.limited('L000001'),
  CaseMother.limited('L000002', {
    exclusions: [{ user: EXCLUDED, until: '2020-01-01T00:00:00Z' }],
    restriction: null,
  }),
  CaseMother.limited('L000003', { exclusionMessage: null, restrictionMessage: null }),
];
const dir = mkdtempSync(join(tmpdir(), 'case-read-limited-'));
const audited: AuditRecord[] = [];
let pki: TestPki;
let service: RunningTestService;
let validator: OpenApiValidator;
let idp: TestIdentityProvider;
const clients = new Map<LimitedAccessSetting, { cert: ClientCredentials; key: string }>();

beforeAll(async () => {
  pki = await makeTestPki();
  service = await startTestService(pki, {
    repository: sqliteCaseStoreOf(join(dir, 'cases.db'), cases),
    audit: { append: async (record) => void audited.push(record) },
  });
  idp = await makeIdentityProvider(pki);
  for (const setting of ['deny', 'allow'] as const) {
    const cn = `client-${setting}`;
    await service.directory.saveClient(
      AccessMother.client(cn, {
        permissions: [...CASE_READS],
        onBehalfOf: idp.onBehalfOf,
        limitedAccess: setting,
      }),
    );
    clients.set(setting, { cert: await pki.client(cn), key: (await service.issueKey(cn)).key });
  }
  validator = new OpenApiValidator(await servedDocument(fixtureApp()));
});
afterAll(async () => {
  await service.close();
  pki.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function read(path: string, user: string | null, setting: LimitedAccessSetting = 'deny') {
  const { cert, key } = clients.get(setting)!;
  const headers: Record<string, string> = {
    'x-api-key': key,
    authorization: `Bearer ${await mintTestToken(pki, `client-${setting}`)}`,
  };
  if (user !== null) {
    headers['x-on-behalf-of'] = await idp.token(user);
  }
  const response = await httpsRequest(`${service.url}${path}`, {
    ca: pki.ca.certPem,
    cert: cert.certPem,
    key: cert.keyPem,
    headers,
  });
  const body = response.json() as Record<string, unknown>;
  return { status: response.status, body, type: String(response.headers['content-type']) };
}

describe.each(CASE_OPERATIONS)('limited access on $path', (row) => {
  const template = row.path;
  const path = (crn: string) => casePath(row, crn);

  it('an excluded user gets 403 limited-access with the case message, naming no other user', async () => {
    const { status, body, type } = await read(path('L000001'), EXCLUDED);
    expect(status).toBe(403);
    expect(validator.responseErrors(template, 'get', 403, 'application/problem+json', body)).toEqual([]);
    expect(type).toMatch(/^application\/problem\+json/);
    expect(body).toMatchObject({
      type: 'urn:case-read:problem:limited-access',
      title: 'Limited access',
      status: 403,
      detail: 'You are excluded from viewing this case.',
    });
    const text = JSON.stringify(body);
    for (const user of [EXCLUDED, NAMED, OTHER_NAMED]) expect(text).not.toContain(user);
  });

  it('a user the restriction does not name gets 403; a generic sentence when the case has no message', async () => {
    const named = await read(path('L000001'), STRANGER);
    expect([named.status, named.body.detail]).toEqual([403, 'This case is restricted.']);
    const generic = await read(path('L000003'), STRANGER);
    expect([generic.status, generic.body.detail]).toEqual([403, 'This case is restricted to named users.']);
    expect(JSON.stringify(generic.body)).not.toMatch(/@/);
  });

  it('a user on the list gets 200 (any letter case), as does anyone once the exclusion has ended', async () => {
    for (const user of [NAMED, 'Officer.C@Probation.Example']) {
      const answer = await read(path('L000001'), user);
      expect(answer.status).toBe(200);
      expect(validator.responseErrors(template, 'get', 200, 'application/json', answer.body)).toEqual([]);
    }
    expect((await read(path('L000002'), EXCLUDED)).status).toBe(200);
  });

  it('an unknown crn is 404 for everyone, never 403', async () => {
    expect((await read(path('Q999999'), EXCLUDED)).status).toBe(404);
    expect((await read(path('Q999999'), null)).status).toBe(404);
  });

  it('no user: deny gets 403, allow gets 200; a case without rules is 200 to both', async () => {
    const denied = await read(path('L000001'), null, 'deny');
    expect([denied.status, denied.body.type]).toEqual([403, 'urn:case-read:problem:limited-access']);
    expect((await read(path('L000001'), null, 'allow')).status).toBe(200);
    expect((await read(path('X123456'), null, 'deny')).status).toBe(200);
  });
});

describe('the audit trail of limited access', () => {
  it('a refusal carries its problem type; an answer under allow is marked; plain answers are neither', async () => {
    audited.length = 0;
    await read('/case/L000001', EXCLUDED);
    await read('/case/L000001', null, 'allow');
    await read('/case/L000001', NAMED);
    await read('/case/Q999999', NAMED);
    expect(audited.map((r) => [r.status, r.problem, r.access, r.onBehalfOf])).toEqual([
      [403, 'limited-access', null, EXCLUDED],
      [200, null, 'client-enforces', null],
      [200, null, null, NAMED],
      [404, 'case-not-found', null, NAMED],
    ]);
  });
});

describe('the served OpenAPI document', () => {
  it('declares 403 limited-access on each crn operation', async () => {
    const document = await servedDocument(fixtureApp());
    for (const { path: template } of CASE_OPERATIONS) {
      expect(JSON.stringify(document.paths[template]?.get?.responses?.['403'])).toContain(
        'urn:case-read:problem:limited-access',
      );
    }
  });
});
