import { FIXTURES_PATH } from '../../src/adapters/memory/store-kind.js';
import type { CaseRecord } from '../../src/domain/types.js';
import { loadCaseFile } from '../../src/formats/case-file.js';

/** The shipped synthetic fixtures, parsed and validated as the service would. */
export function fixtureCases(): CaseRecord[] {
  return loadCaseFile(FIXTURES_PATH.pathname);
}

/**
 * The fixtures any reader may see: those without active limited-access rules. The others
 * (`L000001`, `L000003`) are refused to a client acting as itself under `deny`, which is
 * what the core app, with no perimeter, reads as.
 */
export function openFixtureCases(): CaseRecord[] {
  return fixtureCases().filter((c) => c.limitedAccess === null || c.crn === 'L000002');
}
