import { minimisePersonalDetails } from '../access/redaction.js';
import { caseReadOperation, type FindersOf } from './case-found.js';

/**
 * Operation `getCase`: personal details and circumstances for one case, if the reader may
 * see it (limited access), with any field the client has withheld answered as null.
 */
export const getCase = caseReadOperation(
  (repository: FindersOf<'findPersonalDetails'>, crn, readFor) =>
    repository.findPersonalDetails(crn, readFor),
  minimisePersonalDetails,
);

/**
 * `getCase` as the stored JSON text, for a repository that holds it (see
 * `findPersonalDetailsText`) and a client that has none of these fields withheld: text is
 * sent as it is, so it can withhold nothing (see `withholdsPersonalDetails`). Limited access
 * is decided exactly as for `getCase`.
 */
export const getCaseText = caseReadOperation(
  (repository: FindersOf<'findPersonalDetailsText'>, crn, readFor) =>
    repository.findPersonalDetailsText(crn, readFor),
  (text) => text,
);
