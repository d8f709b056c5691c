import type { SarTokenClaims } from '../domain/access/sar-caller.js';

/**
 * Verifies the bearer tokens of the organisation's SAR service at its own door (decisions §23;
 * adapter: jose). Contract: asymmetric algorithms only (never `none`, never HS*), the
 * configured `iss`, `exp` required, a small clock tolerance, no audience (the estate's tokens
 * carry none for this). A token that is malformed, does not verify, has expired, is another
 * issuer's, is signed by a key the key set does not hold, or names no client is an
 * `UnauthenticatedError` (401); a key set that cannot be had (not reached, not a key set, its
 * server's certificate not verified) is a `StoreUnavailableError` (503), never a 401: the
 * caller tries again. No message holds token material.
 */
export interface SarTokenVerifier {
  verify(token: string): Promise<SarTokenClaims>;
  /**
   * What `verify` would answer at once, when this verifier holds the token as verified and
   * unexpired: the same claims, no promise. `undefined` when it must verify it; never a refusal.
   */
  held?(token: string): SarTokenClaims | undefined;
}
