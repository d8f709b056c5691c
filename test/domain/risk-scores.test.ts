import { describe, expect, it } from 'vitest';
import { Crn } from '../../src/domain/crn.js';
import { CaseNotFoundError, InvalidPaginationError } from '../../src/domain/errors.js';
import type { RiskPredictorScore } from '../../src/domain/types.js';
import { getRiskScores, pageRequest, paginate } from '../../src/domain/use-cases/get-risk-scores.js';
import { CaseMother } from '../support/mothers.js';

const scores: RiskPredictorScore[] = [
  CaseMother.riskScore('2023-02-01T09:00:00+00:00'),
  CaseMother.riskScore('2025-01-02T08:00:00-05:00'), // 13:00Z: newest
  CaseMother.riskScore('2025-01-02T12:00:00+00:00'), // 12:00Z
  CaseMother.riskScore('2024-07-15T14:30:00+01:00'),
];
const repository = {
  findRiskScores: async (crn: Crn) => {
    const held = crn.value === 'X123456' ? scores : crn.value === 'A000001' ? [] : undefined;
    return held && { value: held, limitedAccess: null };
  },
};

describe('getRiskScores', () => {
  it('orders newest first by the instant, not the text of completedDate', async () => {
    const page = (await getRiskScores({ repository }, Crn.parse('X123456'), { page: 1, perPage: 10 })).body;
    expect(page.data.map((s) => s.completedDate)).toEqual([
      '2025-01-02T08:00:00-05:00',
      '2025-01-02T12:00:00+00:00',
      '2024-07-15T14:30:00+01:00',
      '2023-02-01T09:00:00+00:00',
    ]);
    expect(page.pagination).toEqual({
      isLastPage: true,
      count: 4,
      page: 1,
      perPage: 10,
      totalCount: 4,
      totalPages: 1,
    });
  });

  it('pages through, the last page marked', async () => {
    const first = (await getRiskScores({ repository }, Crn.parse('X123456'), { page: 1, perPage: 3 })).body;
    const second = (await getRiskScores({ repository }, Crn.parse('X123456'), { page: 2, perPage: 3 })).body;
    expect(first.pagination).toEqual({
      isLastPage: false,
      count: 3,
      page: 1,
      perPage: 3,
      totalCount: 4,
      totalPages: 2,
    });
    expect(second.data.map((s) => s.completedDate)).toEqual(['2023-02-01T09:00:00+00:00']);
    expect(second.pagination.isLastPage).toBe(true);
  });

  it('a held case with no assessments is an empty last page; an unknown case is not found', async () => {
    expect(
      (await getRiskScores({ repository }, Crn.parse('A000001'), { page: 1, perPage: 10 })).body,
    ).toEqual({
      data: [],
      pagination: { isLastPage: true, count: 0, page: 1, perPage: 10, totalCount: 0, totalPages: 0 },
    });
    await expect(
      getRiskScores({ repository }, Crn.parse('Q000000'), { page: 1, perPage: 10 }),
    ).rejects.toBeInstanceOf(CaseNotFoundError);
  });

  it('does not reorder what the repository returned', async () => {
    const before = scores.map((s) => s.completedDate);
    (await getRiskScores({ repository }, Crn.parse('X123456'), { page: 1, perPage: 10 })).body;
    expect(scores.map((s) => s.completedDate)).toEqual(before);
  });
});

describe('pagination', () => {
  it.each([
    [0, 10, 'page must be a whole number, 1 or more'],
    [1.5, 10, 'page must be'],
    [1, 0, 'perPage must be a whole number 1..100'],
    [1, 101, 'perPage must be'],
  ])('refuses page %s perPage %s', (page, perPage, message) => {
    expect(() => pageRequest(page, perPage)).toThrow(InvalidPaginationError);
    expect(() => pageRequest(page, perPage)).toThrow(message);
  });

  it('a page past the end is empty and last', () => {
    expect(paginate([1, 2, 3], { page: 5, perPage: 2 })).toEqual({
      data: [],
      pagination: { isLastPage: true, count: 0, page: 5, perPage: 2, totalCount: 3, totalPages: 2 },
    });
  });
});
