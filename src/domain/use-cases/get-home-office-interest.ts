import { minimiseHomeOfficeInterest } from '../access/redaction.js';
import type { Crn } from '../crn.js';
import type { HomeOfficeInterest } from '../types.js';
import {
  type Answer,
  admitted,
  type CaseReadDeps,
  type CaseReader,
  CLIENT_AS_ITSELF,
  readFor,
} from './case-found.js';

/**
 * Operation `getHomeOfficeInterest`: whether the Home Office has an interest, with notes
 * (null when the client has them withheld), if the reader may see the case.
 */
export async function getHomeOfficeInterest(
  { repository, now }: CaseReadDeps<'findHomeOfficeInterest'>,
  crn: Crn,
  reader: CaseReader = CLIENT_AS_ITSELF,
): Promise<Answer<HomeOfficeInterest>> {
  const answer = admitted(crn, await repository.findHomeOfficeInterest(crn, readFor(reader)), reader, now);
  return { ...answer, body: minimiseHomeOfficeInterest(answer.body, reader.withheld) };
}
