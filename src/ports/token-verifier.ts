import type { BearerClaims, OnBehalfOfClaims, OnBehalfOfSettings } from '../domain/access/model.js';

/**
 * Verifies bearer and on-behalf-of JWTs (adapter: jose). Contract: an algorithm allowlist
 * of asymmetric algorithms only (never `none`, never HS*), `iss`, `aud`, `exp` and `nbf`
 * with a small clock tolerance; every failure is an `UnauthenticatedError` whose reason
 * names what failed and never contains token material.
 */
export interface TokenVerifier {
  verifyBearer(token: string): Promise<BearerClaims>;
  /**
   * What `verifyBearer` would answer at once, when this verifier holds the token as verified
   * and unexpired: the same claims, no promise. `undefined` when it must verify it (or cannot
   * say at once); never a refusal.
   */
  heldBearer?(token: string): BearerClaims | undefined;
  /** Verifies an on-behalf-of token with the client's own settings; returns the user's e-mail. */
  verifyOnBehalfOf(token: string, settings: OnBehalfOfSettings): Promise<OnBehalfOfClaims>;
}
