import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createDevIssuer, mintToken } from '../../../src/adapters/jose/dev-issuer.js';
import { JoseTokenVerifier, keySetFrom } from '../../../src/adapters/jose/token-verifier.js';
import { UnauthenticatedError } from '../../../src/domain/errors.js';

vi.mock('jose', async (importOriginal) => {
  const actual = await importOriginal<typeof import('jose')>();
  return { ...actual, jwtVerify: vi.fn(actual.jwtVerify) };
});

const dir = mkdtempSync(join(tmpdir(), 'case-read-jose-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const issuer = await createDevIssuer();
const jwksPath = join(dir, 'jwks.json');
writeFileSync(jwksPath, JSON.stringify(issuer.jwks));
const bearer = { jwks: jwksPath, issuer: 'https://issuer.test', audience: 'svc' };
const mint = (extra: Partial<Parameters<typeof mintToken>[0]> = {}) =>
  mintToken({
    privateJwk: issuer.privateJwk,
    issuer: bearer.issuer,
    audience: bearer.audience,
    clientId: 'client-a',
    expiresInSeconds: 600,
    ...extra,
  });

describe('JoseTokenVerifier.verifyBearer', () => {
  it('returns client id, certificate binding and expiry', async () => {
    const verifier = new JoseTokenVerifier({ bearer });
    const claims = await verifier.verifyBearer(await mint({ certificateThumbprint: 'abc' }));
    expect(claims.clientId).toBe('client-a');
    expect(claims.certificateThumbprint).toBe('abc');
    expect(claims.expiresAt.getTime()).toBeGreaterThan(Date.now());
  });

  it('verifies a token once, then answers from the cache until it expires', async () => {
    let now = new Date();
    const verifier = new JoseTokenVerifier({ bearer, now: () => now, clockToleranceSeconds: 0 });
    const token = await mint({ expiresInSeconds: 60 });
    const spy = vi.mocked(jose.jwtVerify);
    spy.mockClear();
    await verifier.verifyBearer(token);
    await verifier.verifyBearer(token);
    await verifier.verifyBearer(token);
    expect(spy).toHaveBeenCalledTimes(1);
    now = new Date(now.getTime() + 61_000);
    await expect(verifier.verifyBearer(token)).rejects.toThrow('the token has expired');
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('keeps at most cacheSize tokens', async () => {
    const verifier = new JoseTokenVerifier({ bearer, cacheSize: 2 });
    const tokens = await Promise.all([1, 2, 3].map(() => mint()));
    for (const t of tokens) await verifier.verifyBearer(t);
    const spy = vi.mocked(jose.jwtVerify);
    spy.mockClear();
    await verifier.verifyBearer(tokens[0] as string);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('does not cache a rejected token', async () => {
    const verifier = new JoseTokenVerifier({ bearer });
    const bad = await mint({ audience: 'other' });
    await expect(verifier.verifyBearer(bad)).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(verifier.verifyBearer(bad)).rejects.toThrow('unexpected audience');
  });

  it('refuses an over-long token before parsing it', async () => {
    const verifier = new JoseTokenVerifier({ bearer });
    await expect(verifier.verifyBearer('a'.repeat(9000))).rejects.toThrow('too long');
  });
});

describe('keySetFrom', () => {
  it('refuses a JWKS file that holds a private key', () => {
    const path = join(dir, 'private.json');
    writeFileSync(path, JSON.stringify({ keys: [issuer.privateJwk] }));
    expect(() => keySetFrom(path)).toThrow(/public keys only/);
  });
  it('refuses a non-https URL and a missing file', () => {
    expect(() => keySetFrom('http://idp.test/jwks')).toThrow(/https/);
    expect(() => keySetFrom(join(dir, 'missing.json'))).toThrow(/cannot be read/);
  });
});
