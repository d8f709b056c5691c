/** The credentials issuer port; its contract is documented where it is declared. */
export type { CredentialsIssuer } from '../domain/needs.js';
