import type { CaseRepository } from '../../ports/case-repository.js';
import type { Crn } from '../crn.js';
import { CaseNotFoundError } from '../errors.js';

/**
 * What a repository found for a case, or {@link CaseNotFoundError}: the first rule of every
 * crn operation (an unknown crn is 404, whatever else would be said of it).
 */
export function foundFor<T>(crn: Crn, answer: T | undefined): T {
  if (answer === undefined) throw new CaseNotFoundError(crn.value);
  return answer;
}

/** What a crn operation needs: the repository's finders it calls, and nothing else. */
export interface CaseReadDeps<F extends keyof CaseRepository> {
  readonly repository: Required<Pick<CaseRepository, F>>;
}
