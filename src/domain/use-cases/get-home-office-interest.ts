import { minimiseHomeOfficeInterest } from '../access/redaction.js';
import { caseReadOperation, type FindersOf } from './case-found.js';

/**
 * Operation `getHomeOfficeInterest`: whether the Home Office has an interest, with notes
 * (null when the client has them withheld), if the reader may see the case.
 */
export const getHomeOfficeInterest = caseReadOperation(
  (repository: FindersOf<'findHomeOfficeInterest'>, crn, readFor) =>
    repository.findHomeOfficeInterest(crn, readFor),
  minimiseHomeOfficeInterest,
);
