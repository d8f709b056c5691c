import { type MinimisedPersonalDetails, minimisePersonalDetails } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import type { JsonText, PersonalDetailsAndCircumstances } from '../types.js';
import { type Answer, type CaseReadDeps, type CaseReader, readAdmitted } from './case-found.js';

/**
 * Operation `getCase`: personal details and circumstances for one case, if the reader may
 * see it (limited access), with any field the client has withheld answered as null.
 */
export async function getCase(
  { repository, now }: CaseReadDeps<'findPersonalDetails'>,
  crn: Crn,
  reader?: CaseReader,
): Promise<Answer<MinimisedPersonalDetails>> {
  return readAdmitted(
    crn,
    reader,
    now,
    (c, f) => repository.findPersonalDetails(c, f),
    minimisePersonalDetails,
  );
}

/**
 * `getCase` as the stored JSON text, for a repository that holds it (see
 * `findPersonalDetailsText`) and a client that has none of these fields withheld: text is
 * sent as it is, so it can withhold nothing (see `withholdsPersonalDetails`). Limited access
 * is decided exactly as for `getCase`.
 */
export async function getCaseText(
  { repository, now }: CaseReadDeps<'findPersonalDetailsText'>,
  crn: Crn,
  reader?: CaseReader,
): Promise<Answer<JsonText<PersonalDetailsAndCircumstances>>> {
  return readAdmitted(
    crn,
    reader,
    now,
    (c, f) => repository.findPersonalDetailsText(c, f),
    (text) => text,
  );
}
