import type { TokenVerifier as DomainTokenVerifier } from '../domain/needs.js';

/**
 * Verifies bearer and on-behalf-of JWTs (adapter: jose). Contract: an algorithm allowlist
 * of asymmetric algorithms only (never `none`, never HS*), `iss`, `aud`, `exp` and `nbf`
 * with a small clock tolerance; every failure is an `UnauthenticatedError` whose reason
 * names what failed and never contains token material.
 */
export interface TokenVerifier extends DomainTokenVerifier {}
