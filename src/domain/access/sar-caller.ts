import { PermissionDeniedError } from '../errors.js';

/**
 * The caller at the SAR service's door (decisions §23): the organisation's SAR service, known
 * by the OAuth2 client-credentials token it presents, not by a client certificate.
 */

/** What a verified token of the SAR service says, as far as the door cares. */
export interface SarTokenClaims {
  /** `client_id`, else `sub`: the recipient the audit trail records. */
  readonly clientId: string;
  /** The strings of the `authorities` claim; none when it is absent or not an array. */
  readonly authorities: readonly string[];
  readonly expiresAt: Date;
}

/**
 * The door's one access rule, once the token verified: it must carry the role the door is
 * configured with (`SAR_AUTH_ROLE`). Refused as a permission not granted (403): the caller is
 * known, and its request is recorded.
 */
export function requireSarRole(claims: SarTokenClaims, role: string): void {
  if (!claims.authorities.includes(role)) throw new PermissionDeniedError(role);
}
