import type { Crn } from '../crn.js';
import { InvalidPaginationError } from '../errors.js';
import type { RiskPredictorScore } from '../types.js';
import { type Answer, type CaseReadDeps, type CaseReader, readAdmitted } from './case-found.js';

export const MAX_PER_PAGE = 100;

export interface PageRequest {
  readonly page: number;
  readonly perPage: number;
}

export interface Page<T> {
  readonly data: T[];
  readonly pagination: {
    readonly isLastPage: boolean;
    /** Items on this page. */
    readonly count: number;
    readonly page: number;
    readonly perPage: number;
    readonly totalCount: number;
    readonly totalPages: number;
  };
}

/** Checks a page request: page ≥ 1, perPage 1..100. */
export function pageRequest(page: number, perPage: number): PageRequest {
  if (!Number.isInteger(page) || page < 1)
    throw new InvalidPaginationError('page must be a whole number, 1 or more');
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE) {
    throw new InvalidPaginationError(`perPage must be a whole number 1..${MAX_PER_PAGE}`);
  }
  return { page, perPage };
}

/** One page of `items`; a page past the end is empty and is the last page. */
export function paginate<T>(items: readonly T[], { page, perPage }: PageRequest): Page<T> {
  const totalCount = items.length;
  const totalPages = Math.ceil(totalCount / perPage);
  const data = items.slice((page - 1) * perPage, page * perPage);
  return {
    data,
    pagination: { isLastPage: page >= totalPages, count: data.length, page, perPage, totalCount, totalPages },
  };
}

/**
 * Operation `getRiskScores`: the case's risk predictor scores, newest assessment first
 * (by the instant of `completedDate`, whatever its offset), one page at a time, if the
 * reader may see the case.
 */
export async function getRiskScores(
  { repository, now }: CaseReadDeps<'findRiskScores'>,
  crn: Crn,
  request: PageRequest,
  reader?: CaseReader,
): Promise<Answer<Page<RiskPredictorScore>>> {
  const checked = pageRequest(request.page, request.perPage);
  return readAdmitted(
    crn,
    reader,
    now,
    (c, f) => repository.findRiskScores(c, f),
    (scores) => {
      const newestFirst = [...scores].sort(
        (a, b) => Date.parse(b.completedDate) - Date.parse(a.completedDate),
      );
      return paginate(newestFirst, checked);
    },
  );
}
