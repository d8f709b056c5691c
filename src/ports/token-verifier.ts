import type { BearerClaims, OnBehalfOfClaims, OnBehalfOfSettings } from '../domain/access/model.js';

/**
 * Verifies bearer and on-behalf-of JWTs (adapter: jose). Contract: an algorithm allowlist
 * of asymmetric algorithms only (never `none`, never HS*), `iss`, `aud`, `exp` and `nbf`
 * with a small clock tolerance; every failure is an `UnauthenticatedError` whose reason
 * names what failed and never contains token material.
 */
export interface TokenVerifier {
  verifyBearer(token: string): Promise<BearerClaims>;
  /** Verifies an on-behalf-of token with the client's own settings; returns the user's e-mail. */
  verifyOnBehalfOf(token: string, settings: OnBehalfOfSettings): Promise<OnBehalfOfClaims>;
}
