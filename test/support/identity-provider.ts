import { exportJWK, generateKeyPair } from 'jose';
import { mintToken } from '../../src/adapters/jose/dev-issuer.js';
import type { OnBehalfOfSettings } from '../../src/domain/access/model.js';
import type { TestPki } from './pki.js';

/**
 * A test identity provider for on-behalf-of tokens (`iss` https://idp.test, `aud` obo): its
 * JWKS written into the PKI's folder, the client settings that trust it, and tokens for any
 * e-mail, valid a minute.
 */
export interface TestIdentityProvider {
  readonly onBehalfOf: OnBehalfOfSettings;
  token(email: string): Promise<string>;
}

export async function makeIdentityProvider(pki: TestPki): Promise<TestIdentityProvider> {
  const pair = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = { ...(await exportJWK(pair.privateKey)), kid: 'idp', alg: 'ES256' };
  const jwks = pki.write(
    'idp.json',
    JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'idp', alg: 'ES256' }] }),
  );
  return {
    onBehalfOf: { mode: 'optional', issuer: 'https://idp.test', jwks, audience: 'obo', emailClaim: 'email' },
    token: (email) =>
      mintToken({
        privateJwk,
        issuer: 'https://idp.test',
        audience: 'obo',
        clientId: 'idp',
        expiresInSeconds: 60,
        extraClaims: { email },
      }),
  };
}
