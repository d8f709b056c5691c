import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createDevIssuer, mintToken } from '../../../src/adapters/jose/dev-issuer.js';
import { JoseTokenVerifier, keySetFrom, loadKeySet } from '../../../src/adapters/jose/token-verifier.js';
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
/** A well-formed RFC 8705 thumbprint: 43 base64url characters. */
const THUMBPRINT = 'q3f0J2Xw8bYc1aZkP9mN4rT6uV0wE5sD7gH2jK1lL8o';
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
    const claims = await verifier.verifyBearer(await mint({ certificateThumbprint: THUMBPRINT }));
    expect(claims.clientId).toBe('client-a');
    expect(claims.certificateThumbprint).toBe(THUMBPRINT);
    expect(claims.expiresAt.getTime()).toBeGreaterThan(Date.now());
  });

  it('verifies a token once, then answers from the cache until it expires', async () => {
    let now = new Date();
    const verifier = new JoseTokenVerifier({ bearer, now: () => now, clockToleranceSeconds: 0 });
    // Issued at the verifier's now, so 61 s on it is past the expiry wherever the wall clock
    // went meanwhile (issued a second later, on the wall clock, it would not be).
    const token = await mint({ expiresInSeconds: 60, issuedAt: now });
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

  it('holds a verified token at once (heldBearer) while it is unexpired, and nothing else', async () => {
    let now = new Date();
    const verifier = new JoseTokenVerifier({ bearer, now: () => now, clockToleranceSeconds: 5 });
    const token = await mint({ expiresInSeconds: 60 });
    expect(verifier.heldBearer(token)).toBeUndefined();
    const verified = await verifier.verifyBearer(token);
    expect(verifier.heldBearer(token)).toBe(verified);
    expect(verifier.heldBearer(`${token}x`)).toBeUndefined();
    // Another token under the same signature (its claims changed) is not the one held.
    const [header, payload, signature] = token.split('.');
    const forged = `${header}.${payload?.slice(0, -2)}${payload?.endsWith('A') ? 'B' : 'A'}${payload?.slice(-1)}.${signature}`;
    expect(verifier.heldBearer(forged)).toBeUndefined();
    await expect(verifier.verifyBearer(forged)).rejects.toBeInstanceOf(UnauthenticatedError);
    now = new Date(verified.expiresAt.getTime() + 4_000);
    expect(verifier.heldBearer(token)).toBe(verified);
    now = new Date(verified.expiresAt.getTime() + 5_000);
    expect(verifier.heldBearer(token)).toBeUndefined();
    const rejected = await mint({ audience: 'other' });
    await verifier.verifyBearer(rejected).catch(() => {});
    expect(verifier.heldBearer(rejected)).toBeUndefined();
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

describe('a cnf claim this service cannot check fails closed (bearer and on-behalf-of alike)', () => {
  const obo = {
    mode: 'optional' as const,
    issuer: bearer.issuer,
    jwks: jwksPath,
    audience: bearer.audience,
    emailClaim: 'email',
  };
  const verifier = new JoseTokenVerifier({ bearer });
  const withCnf = (cnf: unknown) => mint({ extraClaims: { email: 'officer@probation.example', cnf } });
  const refused: [string, unknown, RegExp][] = [
    [
      'an array holding the right thumbprint',
      { 'x5t#S256': [THUMBPRINT] },
      /thumbprint is not a base64url SHA-256/,
    ],
    ['a number', { 'x5t#S256': 42 }, /thumbprint is not a base64url SHA-256/],
    ['null', { 'x5t#S256': null }, /thumbprint is not a base64url SHA-256/],
    ['too short', { 'x5t#S256': THUMBPRINT.slice(1) }, /thumbprint is not a base64url SHA-256/],
    ['padded base64', { 'x5t#S256': `${THUMBPRINT.slice(0, 42)}=` }, /thumbprint is not a base64url SHA-256/],
    [
      'standard base64 alphabet',
      { 'x5t#S256': `+/${THUMBPRINT.slice(2)}` },
      /thumbprint is not a base64url SHA-256/,
    ],
    ['DPoP (jkt) instead', { jkt: THUMBPRINT }, /confirmation method this service cannot check/],
    [
      'a thumbprint and a jkt',
      { 'x5t#S256': THUMBPRINT, jkt: THUMBPRINT },
      /confirmation method this service cannot check/,
    ],
    ['a jwk', { jwk: { kty: 'EC' } }, /confirmation method this service cannot check/],
    ['an empty object', {}, /confirms nothing/],
    ['a string', THUMBPRINT, /cnf claim is not an object/],
    ['an array', [{ 'x5t#S256': THUMBPRINT }], /cnf claim is not an object/],
    ['null', null, /cnf claim is not an object/],
    ['a boolean', true, /cnf claim is not an object/],
  ];
  it.each(refused)('bearer: cnf %s → refused', async (_label, cnf, reason) => {
    const error = await verifier.verifyBearer(await withCnf(cnf)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as UnauthenticatedError).scheme).toBe('bearer');
    expect((error as Error).message).toMatch(reason);
    // The reason repeats nothing of the token.
    expect((error as Error).message).not.toContain(THUMBPRINT.slice(0, 10));
  });
  it.each(refused)('on-behalf-of: cnf %s → refused', async (_label, cnf, reason) => {
    const error = await verifier.verifyOnBehalfOf(await withCnf(cnf), obo).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as UnauthenticatedError).scheme).toBe('on-behalf-of');
    expect((error as Error).message).toMatch(reason);
  });
  it('a well-formed x5t#S256 is returned as the binding; no cnf is unbound', async () => {
    expect(
      (await verifier.verifyBearer(await withCnf({ 'x5t#S256': THUMBPRINT }))).certificateThumbprint,
    ).toBe(THUMBPRINT);
    expect(await verifier.verifyOnBehalfOf(await withCnf({ 'x5t#S256': THUMBPRINT }), obo)).toEqual({
      email: 'officer@probation.example',
      certificateThumbprint: THUMBPRINT,
    });
    expect((await verifier.verifyBearer(await mint())).certificateThumbprint).toBeNull();
    expect((await verifier.verifyOnBehalfOf(await withCnf(undefined), obo)).certificateThumbprint).toBeNull();
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
  it('refuses a directory or a device as the file, naming what it is', () => {
    expect(() => keySetFrom(dir)).toThrow(`JWKS file ${dir} is not a regular file (a directory)`);
    expect(() => keySetFrom('/dev/null')).toThrow(
      'JWKS file /dev/null is not a regular file (a character device)',
    );
  });
});

describe('loadKeySet, a client’s on-behalf-of JWKS read while serving', () => {
  it('reads the file without blocking the event loop, and refuses a FIFO at once', async () => {
    expect(await loadKeySet(jwksPath)).toBeTypeOf('function');
    const fifo = join(dir, 'jwks.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await expect(loadKeySet(fifo)).rejects.toThrow(`JWKS file ${fifo} is not a regular file (a FIFO)`);
    // A request whose client names it is refused as keys that could not be loaded, not left waiting.
    const verifier = new JoseTokenVerifier({ bearer });
    const token = await mint({ extraClaims: { email: 'officer@probation.example' } });
    const obo = {
      mode: 'optional' as const,
      issuer: bearer.issuer,
      jwks: fifo,
      audience: bearer.audience,
      emailClaim: 'email',
    };
    const error = await verifier.verifyOnBehalfOf(token, obo).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as Error).message).toBe('on-behalf-of token: the trusted keys could not be loaded');
  });
});

describe('an https:// JWKS', () => {
  it('is fetched over verified TLS whatever NODE_TLS_REJECT_UNAUTHORIZED says (decisions §20)', async () => {
    const { makeTestPki } = await import('../../support/pki.js');
    const { createServer } = await import('node:https');
    const pki = await makeTestPki();
    // A server whose certificate no CA the process trusts signed: the JWKS must not be taken from it.
    let served = 0;
    const server = createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (_req, res) => {
      served++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    try {
      const keySet = keySetFrom(`https://localhost:${port}/jwks`);
      await expect(
        keySet({ alg: 'ES256', kid: 'k' }, { payload: '', signature: '' } as never),
      ).rejects.toThrow();
      // The handshake failed: the request never reached the server.
      expect(served).toBe(0);
    } finally {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
      await new Promise((resolve) => server.close(resolve));
      pki.cleanup();
    }
  });
});
