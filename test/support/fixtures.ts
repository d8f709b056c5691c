import { FIXTURES_PATH, loadCaseFile } from '../../src/adapters/memory/case-file.js';
import type { CaseRecord } from '../../src/domain/types.js';

/** The shipped synthetic fixtures, parsed and validated as the service would. */
export function fixtureCases(): CaseRecord[] {
  return loadCaseFile(FIXTURES_PATH.pathname);
}
