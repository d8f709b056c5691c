/** The case repository port; its contract is documented where it is declared. */
export type { CaseRepository } from '../domain/needs.js';
