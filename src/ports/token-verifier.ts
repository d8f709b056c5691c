/** The token verifier port; its contract is documented where it is declared. */
export type { TokenVerifier } from '../domain/needs.js';
