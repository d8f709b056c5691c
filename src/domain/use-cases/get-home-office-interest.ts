import { minimiseHomeOfficeInterest } from '../access/redaction.js';
import { caseReadOperation } from './case-found.js';

/**
 * Operation `getHomeOfficeInterest`: whether the Home Office has an interest, with notes
 * (null when the client has them withheld), if the reader may see the case.
 */
export const getHomeOfficeInterest = caseReadOperation('findHomeOfficeInterest', minimiseHomeOfficeInterest);
