import { beforeAll, describe, expect, it } from 'vitest';
import { openFixtureCases } from '../../support/fixtures.js';
import { fixtureApp, servedDocument } from '../../support/http.js';
import { OpenApiValidator } from '../../support/openapi-validator.js';

const app = fixtureApp();
let validator: OpenApiValidator;
beforeAll(async () => {
  validator = new OpenApiValidator(await servedDocument(app));
});
const PATH = '/v1/persons/{crn}/risks/scores';

describe('GET /v1/persons/{crn}/risks/scores', () => {
  it.each(openFixtureCases().map((c) => [c.crn, c] as const))(
    '%s: every assessment, newest first, valid against the document',
    async (crn, record) => {
      const response = await app.request(`/v1/persons/${crn}/risks/scores?perPage=100`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        data: { completedDate: string }[];
        pagination: { totalCount: number };
      };
      expect(validator.responseErrors(PATH, 'get', 200, 'application/json', body)).toEqual([]);
      const expected = [...record.riskScores].sort(
        (a, b) => Date.parse(b.completedDate) - Date.parse(a.completedDate),
      );
      expect(body.data).toStrictEqual(expected);
      expect(body.pagination.totalCount).toBe(record.riskScores.length);
    },
  );

  it('defaults to page 1 of 10, and pages through twelve assessments', async () => {
    const first = (await (await app.request('/v1/persons/A000004/risks/scores')).json()) as {
      data: unknown[];
      pagination: unknown;
    };
    expect(first.data).toHaveLength(10);
    expect(first.pagination).toEqual({
      isLastPage: false,
      count: 10,
      page: 1,
      perPage: 10,
      totalCount: 12,
      totalPages: 2,
    });
    const second = (await (await app.request('/v1/persons/A000004/risks/scores?page=2')).json()) as {
      data: { completedDate: string }[];
      pagination: { isLastPage: boolean };
    };
    expect(second.data.map((s) => s.completedDate)).toEqual([
      '2024-02-01T10:00:00+00:00',
      '2024-01-01T10:00:00+00:00',
    ]);
    expect(second.pagination.isLastPage).toBe(true);
  });

  it('orders two assessments on one day by instant: -05:00 at 08:00 is after +00:00 at 12:00', async () => {
    const body = (await (await app.request('/v1/persons/B000019/risks/scores')).json()) as {
      data: { completedDate: string }[];
    };
    expect(body.data.map((s) => s.completedDate)).toEqual([
      '2025-01-02T08:00:00-05:00',
      '2025-01-02T12:00:00+00:00',
    ]);
  });

  it.each([
    ['page=0', 'pagination is not valid: page must be a whole number, 1 or more'],
    ['perPage=101', 'pagination is not valid: perPage must be a whole number 1..100'],
    ['perPage=abc', 'perPage: must be a whole number'],
    ['page=-1', 'page: must be a whole number'],
    ['page=1e3', 'page: must be a whole number'],
  ])('?%s → 400 problem naming the parameter', async (query, detail) => {
    const response = await app.request(`/v1/persons/X123456/risks/scores?${query}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { detail: string; type: string };
    expect(body.detail).toBe(detail);
    expect(body.type).toBe('urn:case-read:problem:invalid-request');
  });

  it('a bad crn → 400, an unknown crn → 404', async () => {
    expect((await app.request('/v1/persons/x1/risks/scores')).status).toBe(400);
    const unknown = await app.request('/v1/persons/Q000000/risks/scores');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { type: string }).type).toBe('urn:case-read:problem:case-not-found');
  });
});
