import { beforeAll, describe, expect, it } from 'vitest';
import { CASE_OPERATIONS, casePath } from '../../../src/domain/case-operations.js';
import { openFixtureCases } from '../../support/fixtures.js';
import { fixtureApp, servedDocument } from '../../support/http.js';
import { OpenApiValidator } from '../../support/openapi-validator.js';

const app = fixtureApp();
let validator: OpenApiValidator;
beforeAll(async () => {
  validator = new OpenApiValidator(await servedDocument(app));
});

const cases = openFixtureCases();

async function get(path: string) {
  const response = await app.request(path);
  return { response, body: (await response.json()) as unknown };
}

describe.each(cases.map((c) => [c.crn, c] as const))('case %s', (crn, record) => {
  it('GET /case/{crn} answers its personal details, valid against the served document', async () => {
    const { response, body } = await get(`/case/${crn}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(body).toStrictEqual(record.personalDetails);
    expect(validator.responseErrors('/case/{crn}', 'get', 200, 'application/json', body)).toEqual([]);
  });

  it('GET /case/{crn}/home-office-interest answers exists and notes', async () => {
    const { response, body } = await get(`/case/${crn}/home-office-interest`);
    expect(response.status).toBe(200);
    expect(body).toStrictEqual(record.homeOfficeInterest);
    expect(
      validator.responseErrors('/case/{crn}/home-office-interest', 'get', 200, 'application/json', body),
    ).toEqual([]);
  });

  it('GET /case/{crn}/community-manager answers the manager, or 404 when there is none', async () => {
    const { response, body } = await get(`/case/${crn}/community-manager`);
    if (record.communityManager === null) {
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(body).toMatchObject({ type: 'urn:case-read:problem:community-manager-not-found', status: 404 });
      expect(
        validator.responseErrors(
          '/case/{crn}/community-manager',
          'get',
          404,
          'application/problem+json',
          body,
        ),
      ).toEqual([]);
    } else {
      expect(response.status).toBe(200);
      expect(body).toStrictEqual({ crn, communityManager: record.communityManager });
      expect(
        validator.responseErrors('/case/{crn}/community-manager', 'get', 200, 'application/json', body),
      ).toEqual([]);
    }
  });
});

describe('the served document rejects what the spec forbids', () => {
  it('flags a field left out: the service promises every field, null when there is nothing', () => {
    expect(
      validator.responseErrors('/case/{crn}/home-office-interest', 'get', 200, 'application/json', {
        exists: false,
      }),
    ).not.toEqual([]);
    expect(
      validator.responseErrors('/case/{crn}/home-office-interest', 'get', 200, 'application/json', {
        exists: false,
        notes: null,
      }),
    ).toEqual([]);
  });

  // Guards the guard: if the validator accepted anything, the tests above would prove nothing.
  it('flags a missing required field, a wrong type and a date-time without offset', () => {
    const invalid = {
      personalCircumstances: [
        {
          type: { code: 'EMP' },
          subType: { code: 'FT', description: 'x' },
          updatedAt: '2024-01-01T00:00:00',
        },
      ],
      preferredLanguage: 'English',
    };
    const errors = validator.responseErrors('/case/{crn}', 'get', 200, 'application/json', invalid);
    expect(errors.join('\n')).toMatch(/description/);
    expect(errors.join('\n')).toMatch(/date-time/);
    expect(errors.join('\n')).toMatch(/preferredLanguage/);
    expect(
      validator.responseErrors('/case/{crn}/home-office-interest', 'get', 200, 'application/json', {
        notes: null,
      }),
    ).not.toEqual([]);
  });
});

describe('an unknown crn', () => {
  it.each(CASE_OPERATIONS.map((row) => casePath(row, 'Q000000')))(
    '%s → 404 case-not-found problem',
    async (path) => {
      const { response, body } = await get(path);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(body).toStrictEqual({
        type: 'urn:case-read:problem:case-not-found',
        title: 'Case not found',
        status: 404,
        detail: 'no case is held for crn Q000000',
        instance: path,
        requestId: response.headers.get('x-request-id'),
      });
    },
  );
});

describe('the limited access fixtures, read as a client acting as itself (deny)', () => {
  it.each([
    ['/case/L000001', 'This case is restricted.'],
    ['/case/L000003/community-manager', 'This case is restricted to named users.'],
    ['/v1/persons/L000001/risks/scores', 'This case is restricted.'],
  ])('%s → 403 limited-access with the case message', async (path, detail) => {
    const { response, body } = await get(path);
    expect(response.status).toBe(403);
    expect(body).toMatchObject({ type: 'urn:case-read:problem:limited-access', detail });
  });

  it('an ended exclusion limits no one', async () => {
    expect((await get('/case/L000002/home-office-interest')).response.status).toBe(200);
  });
});

describe('GET /case/{crn} from a store that holds the document as text (SQLite)', () => {
  it('sends the stored text: every fixture as stored, valid against the served document, 404 for none', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { SqliteCaseRepository, SqliteCaseWriter } = await import(
      '../../../src/adapters/sqlite/case-store.js'
    );
    const dir = mkdtempSync(join(tmpdir(), 'case-read-text-'));
    const writer = SqliteCaseWriter.open(join(dir, 'cases.db'));
    writer.write(cases);
    writer.close();
    const repository = SqliteCaseRepository.openReadOnly(join(dir, 'cases.db'));
    try {
      expect(repository.findPersonalDetailsText).toBeDefined();
      const textApp = fixtureApp({ repository });
      for (const record of cases) {
        const response = await textApp.request(`/case/${record.crn}`);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('application/json');
        const body = (await response.json()) as unknown;
        expect(body, record.crn).toStrictEqual(record.personalDetails);
        expect(validator.responseErrors('/case/{crn}', 'get', 200, 'application/json', body)).toEqual([]);
      }
      const missing = await textApp.request('/case/Q999998');
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toBe('application/problem+json');
    } finally {
      repository.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
