import { minimiseHomeOfficeInterest } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import type { HomeOfficeInterest } from '../types.js';
import { type Answer, type CaseReadDeps, type CaseReader, readAdmitted } from './case-found.js';

/**
 * Operation `getHomeOfficeInterest`: whether the Home Office has an interest, with notes
 * (null when the client has them withheld), if the reader may see the case.
 */
export async function getHomeOfficeInterest(
  { repository, now }: CaseReadDeps<'findHomeOfficeInterest'>,
  crn: Crn,
  reader?: CaseReader,
): Promise<Answer<HomeOfficeInterest>> {
  return readAdmitted(
    crn,
    reader,
    now,
    (c, f) => repository.findHomeOfficeInterest(c, f),
    minimiseHomeOfficeInterest,
  );
}
