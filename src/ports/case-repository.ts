import type { CaseReader } from '../domain/needs.js';

/**
 * The case repository port: where case data is read from (fixtures in memory, a SQLite
 * file, an upstream system of record). It is exactly what the use cases need
 * ({@link CaseReader}), with the contract every adapter keeps, checked by
 * `test/contract/case-repository.contract.ts`:
 *
 * - "not found" is `undefined`, never an exception; an exception means the store failed;
 * - optional values come back as `null`, never absent; lists as arrays, `[]` when empty;
 * - lists keep the order in which they were stored;
 * - date-times come back exactly as stored (ISO 8601 with offset);
 * - answers are fresh objects: a caller mutating one cannot change what the next caller sees.
 */
export interface CaseRepository extends CaseReader {}
