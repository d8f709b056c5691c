import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { JoseSarTokenVerifier, SAR_KEY_SET } from '../../../src/adapters/jose/sar-token-verifier.js';
import { issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { StoreUnavailableError, UnauthenticatedError } from '../../../src/domain/errors.js';
import {
  closedPort,
  hmacToken,
  type JwksServer,
  jwksOf,
  SAR_CLIENT,
  SAR_ISSUER,
  SAR_ROLE,
  type SigningKey,
  sarToken,
  signingKey,
  startJwksServer,
  unsignedToken,
} from '../../support/authorisation-server.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';

/**
 * The SAR service's tokens at its door (decisions §23): what verifies, what is a 401 (and its
 * reason, never token material), what is the key set's fault (503, never a 401); and the
 * remote key set fetched over verified TLS, fetched again for a new key only after its
 * cooldown, however many unknown keys are sent meanwhile.
 */

let pki: TestPki;
let key: SigningKey;
let other: SigningKey;
let jwksFile: string;
const defaultCas = getCACertificates('default');

beforeAll(async () => {
  pki = await makeTestPki();
  key = await signingKey('as-1');
  other = await signingKey('as-1');
  jwksFile = pki.write('sar-jwks.json', JSON.stringify(jwksOf([key])));
});
afterAll(() => pki.cleanup());

const verifier = (jwks = jwksFile) => new JoseSarTokenVerifier({ jwks, issuer: SAR_ISSUER });

/** What `verify` threw (it must throw). */
async function refusal(verifying: Promise<unknown>): Promise<Error> {
  const outcome = await verifying.then(
    () => undefined,
    (error: unknown) => error as Error,
  );
  if (outcome === undefined) throw new Error('expected a refusal');
  return outcome;
}

describe('JoseSarTokenVerifier: a token of the SAR service', () => {
  it('verifies one signed with the key set’s key: its client, its roles, its expiry', async () => {
    const claims = await verifier().verify(await sarToken({ key }));
    expect(claims.clientId).toBe(SAR_CLIENT);
    expect(claims.authorities).toEqual([SAR_ROLE]);
    expect(claims.expiresAt.getTime()).toBeGreaterThan(Date.now());
  });

  it('names the recipient by client_id, else sub; a token that names neither is refused', async () => {
    const of = async (claims: Record<string, unknown>) =>
      (await verifier().verify(await sarToken({ key, claims }))).clientId;
    expect(await of({ client_id: 'sar-a', sub: 'someone' })).toBe('sar-a');
    expect(await of({ client_id: '', sub: 'sar-b' })).toBe('sar-b');
    expect(await of({ sub: 'sar-c' })).toBe('sar-c');
    const none = await refusal(
      verifier().verify(await sarToken({ key, claims: { authorities: [SAR_ROLE] } })),
    );
    expect(none).toBeInstanceOf(UnauthenticatedError);
    expect(none.message).toBe('bearer token: the token names no client (client_id or sub)');
    const odd = await refusal(verifier().verify(await sarToken({ key, claims: { client_id: 'a b\n' } })));
    expect(odd.message).toContain('cannot record');
  });

  it('reads authorities as an array of strings: anything else holds no role', async () => {
    const roles = async (authorities: unknown) =>
      (await verifier().verify(await sarToken({ key, claims: { client_id: 'c', authorities } }))).authorities;
    expect(await roles([SAR_ROLE, 7, null, 'ROLE_OTHER'])).toEqual([SAR_ROLE, 'ROLE_OTHER']);
    expect(await roles(SAR_ROLE)).toEqual([]);
    expect(await roles({ role: SAR_ROLE })).toEqual([]);
    expect(await roles(undefined)).toEqual([]);
  });

  const refusals: [string, () => Promise<string>, string][] = [
    ['expired', () => sarToken({ key, expiresIn: -120 }), 'the token has expired'],
    ['another issuer', () => sarToken({ key, issuer: 'https://elsewhere.test' }), 'unexpected issuer'],
    ['a bad signature (another key, the same kid)', () => sarToken({ key: other }), 'does not verify'],
    ['an unknown kid', () => sarToken({ key, kid: 'as-9' }), 'no trusted key matches the token'],
    ['HS256', () => hmacToken({ client_id: 'c', authorities: [SAR_ROLE] }, 'secret'), 'not allowed'],
    ['alg none', async () => unsignedToken({ iss: SAR_ISSUER, client_id: 'c', exp: 4e9 }), 'not allowed'],
    ['malformed', async () => 'not.a.token', 'malformed'],
  ];
  it.each(refusals)(
    'refuses %s with a 401 reason that holds nothing of the token',
    async (_label, mint, reason) => {
      const token = await mint();
      const error = await refusal(verifier().verify(token));
      expect(error).toBeInstanceOf(UnauthenticatedError);
      expect(error.message).toContain(reason);
      for (const part of token.split('.').filter((p) => p.length > 8))
        expect(error.message).not.toContain(part);
    },
  );

  it('refuses a token without exp', async () => {
    const { SignJWT } = await import('jose');
    const token = await new SignJWT({ client_id: 'c', authorities: [SAR_ROLE] })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .setIssuer(SAR_ISSUER)
      .sign(key.privateKey);
    expect((await refusal(verifier().verify(token))).message).toContain('no valid expiry');
  });

  it('holds a verified token at once until it expires, that very token only', async () => {
    let now = new Date();
    const held = new JoseSarTokenVerifier({ jwks: jwksFile, issuer: SAR_ISSUER }, { now: () => now });
    const token = await sarToken({ key, expiresIn: 60 });
    expect(held.held(token)).toBeUndefined();
    const claims = await held.verify(token);
    expect(held.held(token)).toBe(claims);
    expect(held.held(await sarToken({ key }))).toBeUndefined();
    now = new Date(claims.expiresAt.getTime() + 31_000);
    expect(held.held(token)).toBeUndefined();
  });

  it('refuses a key set source that is not a file or an https URL, and a file that is no key set', () => {
    expect(() => verifier('http://auth.example.test/jwks')).toThrow(/https/);
    expect(() => verifier(pki.write('not-jwks.json', '{"keys": 3}'))).toThrow(/public keys only/);
  });
});

describe('JoseSarTokenVerifier: a key set over HTTPS', () => {
  let server: JwksServer;
  let untrusted: JwksServer;

  beforeAll(async () => {
    // The test CA trusted for this process, as NODE_EXTRA_CA_CERTS trusts it for serve.
    setDefaultCACertificates([...defaultCas, pki.ca.certPem]);
    server = await startJwksServer({ cert: pki.server.certPem, key: pki.server.keyPem }, [key]);
    const foreign = await issueServerCertificate(pki.otherCa);
    untrusted = await startJwksServer({ cert: foreign.certPem, key: foreign.keyPem }, [key]);
  });
  afterEach(() => {
    vi.useRealTimers();
    server.answer('serve');
    server.publish([key]);
  });
  afterAll(async () => {
    setDefaultCACertificates(defaultCas);
    await server.close();
    await untrusted.close();
  });

  it('fetches it once, and a key published later only after the cooldown; a flood of unknown kids fetches nothing', async () => {
    const remote = verifier(server.url);
    const before = server.requests();
    expect((await remote.verify(await sarToken({ key }))).clientId).toBe(SAR_CLIENT);
    expect(server.requests()).toBe(before + 1);
    // The authorisation server rotates: a second key, published after the first fetch.
    const next = await signingKey('as-2');
    server.publish([key, next]);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    // Within the cooldown: refused as an unknown key, the set not fetched again.
    const early = await refusal(remote.verify(await sarToken({ key: next })));
    expect(early.message).toContain('no trusted key matches the token');
    for (let i = 0; i < 20; i++) {
      await expect(remote.verify(await sarToken({ key, kid: `flood-${i}` }))).rejects.toThrow(
        UnauthenticatedError,
      );
    }
    expect(server.requests()).toBe(before + 1);
    // Past the cooldown (30 s): the first use of the new key fetches the set once, and verifies.
    vi.setSystemTime(Date.now() + 31_000);
    expect((await remote.verify(await sarToken({ key: next }))).clientId).toBe(SAR_CLIENT);
    expect(server.requests()).toBe(before + 2);
    for (let i = 0; i < 5; i++) await remote.verify(await sarToken({ key: next }));
    await expect(remote.verify(await sarToken({ key, kid: 'flood-again' }))).rejects.toThrow(
      UnauthenticatedError,
    );
    expect(server.requests()).toBe(before + 2);
  });

  /** The URL of a key set server that answers as `mode`. */
  const answering = (mode: 'error' | 'not-json' | 'drop') => async () => {
    server.answer(mode);
    return server.url;
  };
  const unavailable: [string, () => Promise<string>, RegExp][] = [
    ['refuses connections', async () => `https://localhost:${await closedPort()}/jwks`, /^unreachable/],
    ['answers 500', answering('error'), /^not-a-key-set$/],
    ['answers what is not JSON', answering('not-json'), /^not-a-key-set$/],
    ['cuts the connection', answering('drop'), /^unreachable/],
    ['has a certificate no trusted CA signed', async () => untrusted.url, /^unreachable/],
  ];
  it.each(unavailable)(
    'a key set server that %s: 503 (the key set unavailable), never a 401',
    async (_l, url, label) => {
      const error = await refusal(verifier(await url()).verify(await sarToken({ key })));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).store).toBe(SAR_KEY_SET);
      expect((error as StoreUnavailableError).logLabel).toMatch(label);
    },
  );

  it('takes no key set from a server whose certificate does not verify, whatever NODE_TLS_REJECT_UNAUTHORIZED says', async () => {
    const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    const served = untrusted.requests();
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    try {
      const error = await refusal(verifier(untrusted.url).verify(await sarToken({ key })));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(untrusted.requests()).toBe(served);
    } finally {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
    }
  });

  it('a key set server that never answers: 503 once the fetch gives up', async () => {
    server.answer('hang');
    const error = await refusal(verifier(server.url).verify(await sarToken({ key })));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).logLabel).toBe('timeout');
  }, 20_000);
});
