import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';

/**
 * A development token issuer: an ES256 key pair whose public half is published as a JWKS
 * file the service trusts (`BEARER_JWKS`). `case-read tokens mint` signs with it. In
 * production, tokens come from the organisation's authorisation server instead.
 */
export const DEV_ISSUER = 'urn:case-read:dev-issuer';
export const DEV_AUDIENCE = 'case-read-service';

export interface DevIssuerKeys {
  readonly privateJwk: JWK;
  readonly jwks: { keys: JWK[] };
}

export async function createDevIssuer(): Promise<DevIssuerKeys> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = randomUUID();
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { privateJwk, jwks: { keys: [publicJwk] } };
}

export interface MintOptions {
  readonly privateJwk: JWK;
  readonly issuer: string;
  readonly audience: string;
  /** Becomes `client_id` and `sub`. */
  readonly clientId: string;
  readonly expiresInSeconds: number;
  /** RFC 8705: binds the token to one certificate (base64url SHA-256 of its DER). */
  readonly certificateThumbprint?: string;
  readonly extraClaims?: Record<string, unknown>;
  readonly notBefore?: Date;
  readonly issuedAt?: Date;
}

export async function mintToken(options: MintOptions): Promise<string> {
  const key = await importJWK(options.privateJwk, 'ES256');
  const issuedAt = Math.floor((options.issuedAt ?? new Date()).getTime() / 1000);
  const jwt = new SignJWT({
    ...options.extraClaims,
    client_id: options.clientId,
    ...(options.certificateThumbprint ? { cnf: { 'x5t#S256': options.certificateThumbprint } } : {}),
  })
    .setProtectedHeader({
      alg: 'ES256',
      typ: 'JWT',
      ...(options.privateJwk.kid ? { kid: options.privateJwk.kid } : {}),
    })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setSubject(options.clientId)
    .setIssuedAt(issuedAt)
    .setJti(randomUUID())
    .setExpirationTime(issuedAt + options.expiresInSeconds);
  if (options.notBefore) jwt.setNotBefore(Math.floor(options.notBefore.getTime() / 1000));
  return jwt.sign(key);
}
