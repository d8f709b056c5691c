import { createHash } from 'node:crypto';
import { base64url, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../../src/adapters/jose/dev-issuer.js';
import type { Permission } from '../../../src/domain/access/permissions.js';
import { CASE_OPERATIONS, CASE_READS, casePath } from '../../../src/domain/case-operations.js';
import { type HttpsResponse, httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import {
  mintTestToken,
  type RunningTestService,
  startTestService,
  TEST_AUDIENCE,
  TEST_ISSUER,
} from '../../support/service.js';

/**
 * The auth matrix: decisions §1 steps 2–9 against the real mutual-TLS server. Every
 * negative case asserts the status, a problem+json body of the right type, and that no
 * secret (API key, token) is echoed anywhere in the response.
 */

const OBO_ISSUER = 'https://idp.test';
const OBO_AUDIENCE = 'case-read-obo';
const CRN = 'X123456';
/** Every case operation (a row of the table): its permission and its path for {@link CRN}. */
const OPERATIONS: ReadonlyArray<readonly [Permission, string]> = CASE_OPERATIONS.map(
  (row) => [row.id, casePath(row, CRN)] as const,
);
/** The paths of the case operations whose row asks for a bearer JWT (step 6). */
const BEARER_PATHS = CASE_OPERATIONS.filter((row) => row.bearer).map((row) => casePath(row, CRN));
const ALL_CASE_READS: Permission[] = [...CASE_READS];
/** Every case read but getRiskScores: a client meant to lack that one permission alone. */
const ALL_BUT_RISK_SCORES: Permission[] = CASE_READS.filter((permission) => permission !== 'getRiskScores');
/** The base permissions of the on-behalf-of clients; the user's grants are every other case read. */
const OBO_BASE: Permission[] = ['getCase'];
const OBO_GRANTS: Permission[] = CASE_READS.filter((permission) => !OBO_BASE.includes(permission));

/** Every client of the matrix that has a key; `ghost` has a certificate only. */
const CLIENTS_WITH_KEYS = [
  'client-a',
  'client-b',
  'suspended',
  'revoked-global',
  'revoked-local',
  'obo-optional',
  'obo-required',
  'obo-forbidden',
  'narrow',
  'risk-reader',
  'no-risk-scores',
];

let pki: TestPki;
let service: RunningTestService;
const certs: Record<string, ClientCredentials> = {};
const keys: Record<string, { id: string; key: string }> = {};
let oboKey: { privateJwk: Awaited<ReturnType<typeof exportJWK>>; jwksPath: string };

const mint = (clientId: string, extra: Parameters<typeof mintTestToken>[2] = {}) =>
  mintTestToken(pki, clientId, extra);

const mintObo = (
  claims: Record<string, unknown>,
  options: { issuer?: string; audience?: string; exp?: number; key?: typeof oboKey.privateJwk } = {},
) =>
  mintToken({
    privateJwk: options.key ?? oboKey.privateJwk,
    issuer: options.issuer ?? OBO_ISSUER,
    audience: options.audience ?? OBO_AUDIENCE,
    clientId: 'idp-user',
    expiresInSeconds: options.exp ?? 600,
    extraClaims: claims,
  });

beforeAll(async () => {
  pki = await makeTestPki();
  service = await startTestService(pki);
  const d = service.directory;
  for (const cn of [...CLIENTS_WITH_KEYS, 'ghost']) {
    certs[cn] = await pki.client(cn);
  }
  const oboPair = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = { ...(await exportJWK(oboPair.publicKey)), kid: 'idp-1', alg: 'ES256' };
  oboKey = {
    privateJwk: { ...(await exportJWK(oboPair.privateKey)), kid: 'idp-1', alg: 'ES256' },
    jwksPath: pki.write('idp-jwks.json', JSON.stringify({ keys: [publicJwk] })),
  };
  const obo = (mode: 'optional' | 'required' | 'forbidden') =>
    mode === 'forbidden'
      ? AccessMother.client('x').onBehalfOf
      : { mode, issuer: OBO_ISSUER, jwks: oboKey.jwksPath, audience: OBO_AUDIENCE, emailClaim: 'email' };
  await d.saveClient(AccessMother.client('client-a', { permissions: ALL_CASE_READS }));
  await d.saveClient(AccessMother.client('client-b', { permissions: ALL_CASE_READS }));
  await d.saveClient(AccessMother.client('suspended', { permissions: ALL_CASE_READS, suspended: true }));
  await d.saveClient(AccessMother.client('revoked-global', { permissions: ALL_CASE_READS }));
  await d.saveClient(AccessMother.client('revoked-local', { permissions: ALL_CASE_READS }));
  await d.saveClient(
    AccessMother.client('obo-optional', { permissions: OBO_BASE, onBehalfOf: obo('optional') }),
  );
  await d.saveClient(
    AccessMother.client('obo-required', { permissions: OBO_BASE, onBehalfOf: obo('required') }),
  );
  await d.saveClient(AccessMother.client('obo-forbidden', { permissions: ALL_CASE_READS }));
  await d.saveClient(AccessMother.client('narrow', { permissions: [] }));
  await d.saveClient(AccessMother.client('risk-reader', { permissions: ['getRiskScores'] }));
  await d.saveClient(AccessMother.client('no-risk-scores', { permissions: ALL_BUT_RISK_SCORES }));
  for (const cn of CLIENTS_WITH_KEYS) {
    keys[cn] = await service.issueKey(cn);
  }
  keys.revoked = await service.issueKey('client-a', { revokedAt: new Date(Date.now() - 1000) });
  keys.expired = await service.issueKey('client-a', { expiresAt: new Date(Date.now() - 1000) });
  await d.revokeCertificate({
    serialNumber: certs['revoked-global']!.serialNumber,
    clientId: null,
    revokedAt: new Date(),
  });
  await d.revokeCertificate({
    serialNumber: certs['revoked-local']!.serialNumber,
    clientId: 'revoked-local',
    revokedAt: new Date(),
  });
  await d.addGrant('officer@probation.example', OBO_GRANTS);
});
afterAll(async () => {
  await service.close();
  pki.cleanup();
});

interface Attempt {
  readonly cn?: string;
  readonly path?: string;
  readonly method?: string;
  readonly key?: string | null;
  readonly bearer?: string | null;
  readonly authorization?: string;
  readonly obo?: string;
}

async function attempt(a: Attempt): Promise<{ response: HttpsResponse; secrets: string[] }> {
  const cn = a.cn ?? 'client-a';
  const key = a.key === undefined ? keys[cn]?.key : a.key;
  const bearer = a.bearer === undefined ? await mint(cn) : a.bearer;
  const headers: Record<string, string> = {};
  if (key !== null && key !== undefined) headers['x-api-key'] = key;
  if (a.authorization !== undefined) headers.authorization = a.authorization;
  else if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  if (a.obo !== undefined) headers['x-on-behalf-of'] = a.obo;
  const cert = certs[cn] as ClientCredentials;
  const response = await httpsRequest(`${service.url}${a.path ?? '/case/X123456'}`, {
    ca: pki.ca.certPem,
    cert: cert.certPem,
    key: cert.keyPem,
    method: a.method ?? 'GET',
    headers,
  });
  const secrets = [key, bearer, a.obo, a.authorization].filter(
    (s): s is string => typeof s === 'string' && s.length > 8,
  );
  return { response, secrets };
}

function expectNoSecretEchoed(response: HttpsResponse, secrets: string[]): void {
  const everything = `${response.text}\n${JSON.stringify(response.headers)}`;
  for (const secret of secrets) {
    expect(everything).not.toContain(secret);
    // Nor a recognisable part of it: the key's secret half or a token's signature.
    const tail = secret.slice(-24);
    expect(everything).not.toContain(tail);
  }
}

async function expectRefused(a: Attempt, status: number, type: string) {
  const { response, secrets } = await attempt(a);
  expect(response.status, response.text).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json');
  const body = response.json() as Record<string, unknown>;
  expect(body.type).toBe(type);
  expect(body.status).toBe(status);
  expect(body.requestId).toBe(response.headers['x-request-id']);
  expect(response.headers['cache-control']).toMatch(/^no-store(, private)?$/);
  expectNoSecretEchoed(response, secrets);
  return { response, body };
}

const ACCESS_DENIED = 'urn:case-read:problem:access-denied';
const CLIENT_NOT_ALLOWED = 'urn:case-read:problem:client-not-allowed';
const UNAUTHENTICATED = 'urn:case-read:problem:unauthenticated';
const PERMISSION_DENIED = 'urn:case-read:problem:permission-denied';
const OBO_NOT_ALLOWED = 'urn:case-read:problem:on-behalf-of-not-allowed';

const PATHS = [...OPERATIONS.map(([, path]) => path), '/openapi.json', '/nowhere'];

describe('step 3: the API key → 403', () => {
  const cases: ReadonlyArray<readonly [string, () => Attempt]> = [
    ['no key', () => ({ key: null })],
    ['an empty key', () => ({ key: '' })],
    ['a malformed key', () => ({ key: 'not-a-key' })],
    ['a key with the prefix but the wrong shape', () => ({ key: 'crs_short_abc' })],
    ['an unknown key of the right shape', () => ({ key: `crs_${'a'.repeat(16)}_${'B'.repeat(43)}` })],
    [
      'the right key id with the wrong secret',
      () => ({ key: `crs_${keys['client-a']!.id}_${'C'.repeat(43)}` }),
    ],
    ['the key Base64-encoded', () => ({ key: Buffer.from(keys['client-a']!.key).toString('base64') })],
    ['the key with a trailing space and text', () => ({ key: `${keys['client-a']!.key} x` })],
    ['a revoked key', () => ({ key: keys.revoked!.key })],
    ['an expired key', () => ({ key: keys.expired!.key })],
    ["another client's key", () => ({ key: keys['client-b']!.key })],
    [
      'an unknown CN presenting a real key',
      () => ({ cn: 'ghost', key: keys['client-a']!.key, bearer: null }),
    ],
  ];
  for (const path of PATHS) {
    it.each(cases)(`${path}: %s`, async (_label, make) => {
      const { body } = await expectRefused({ ...make(), path }, 403, ACCESS_DENIED);
      expect(body.detail).toBe('the API key is missing or invalid');
    });
  }
});

describe('step 4: the client → 403', () => {
  it.each([
    ['a suspended client', 'suspended'],
    ['a certificate serial revoked for every client', 'revoked-global'],
    ['a certificate serial revoked for this CN', 'revoked-local'],
  ])('%s', async (_label, cn) => {
    for (const path of PATHS) {
      const { body } = await expectRefused({ cn, path }, 403, CLIENT_NOT_ALLOWED);
      expect(body.detail).toBe('this client is not allowed to call the service');
    }
  });
});

describe('step 6: the bearer token → 401 with WWW-Authenticate', () => {
  const cases: ReadonlyArray<readonly [string, () => Promise<Attempt>]> = [
    ['no bearer token', async () => ({ bearer: null })],
    ['a garbage token', async () => ({ bearer: 'garbage' })],
    ['a Basic authorization header', async () => ({ authorization: 'Basic Y2xpZW50LWE6c2VjcmV0' })],
    ['a bearer scheme with no token', async () => ({ authorization: 'Bearer ' })],
    [
      'a token signed by an untrusted key',
      async () => {
        const other = await generateKeyPair('ES256', { extractable: true });
        const jwk = {
          ...(await exportJWK(other.privateKey)),
          kid: pki.issuer.privateJwk.kid as string,
          alg: 'ES256',
        };
        return {
          bearer: await mintToken({
            privateJwk: jwk,
            issuer: TEST_ISSUER,
            audience: TEST_AUDIENCE,
            clientId: 'client-a',
            expiresInSeconds: 600,
          }),
        };
      },
    ],
    [
      'a token with a tampered payload',
      async () => {
        const [h, , s] = (await mint('client-a')).split('.');
        const payload = base64url.encode(
          JSON.stringify({
            iss: TEST_ISSUER,
            aud: TEST_AUDIENCE,
            client_id: 'client-a',
            sub: 'client-a',
            exp: Math.floor(Date.now() / 1000) + 9999,
          }),
        );
        return { bearer: `${h}.${payload}.${s}` };
      },
    ],
    [
      'alg: none',
      async () => ({
        bearer: new UnsecuredJWT({ client_id: 'client-a' })
          .setIssuer(TEST_ISSUER)
          .setAudience(TEST_AUDIENCE)
          .setSubject('client-a')
          .setExpirationTime('10m')
          .encode(),
      }),
    ],
    [
      'HS256 signed with the public key',
      async () => {
        const publicJwk = pki.issuer.jwks.keys[0]!;
        const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
        return {
          bearer: await new SignJWT({ client_id: 'client-a' })
            .setProtectedHeader({ alg: 'HS256', kid: publicJwk.kid as string })
            .setIssuer(TEST_ISSUER)
            .setAudience(TEST_AUDIENCE)
            .setSubject('client-a')
            .setExpirationTime('10m')
            .sign(secret),
        };
      },
    ],
    ['a wrong issuer', async () => ({ bearer: await mint('client-a', { issuer: 'https://evil.test' }) })],
    ['a wrong audience', async () => ({ bearer: await mint('client-a', { audience: 'another-service' }) })],
    [
      'an expired token',
      async () => ({
        bearer: await mint('client-a', { issuedAt: new Date(Date.now() - 3_600_000), expiresInSeconds: 600 }),
      }),
    ],
    [
      'a token not yet valid',
      async () => ({ bearer: await mint('client-a', { notBefore: new Date(Date.now() + 3_600_000) }) }),
    ],
    ['a token issued to another client', async () => ({ bearer: await mint('client-b') })],
    [
      'a token bound to another certificate (cnf)',
      async () => ({
        bearer: await mint('client-a', { certificateThumbprint: certs['client-b']!.thumbprint }),
      }),
    ],
    // A binding that cannot be checked is refused, never taken as unbound (tokens signed by
    // the real issuer, as an attacker holding a token bound elsewhere would present them).
    [
      'cnf x5t#S256 an array holding the right thumbprint',
      async () => ({
        bearer: await mint('client-a', {
          extraClaims: { cnf: { 'x5t#S256': [certs['client-a']!.thumbprint] } },
        }),
      }),
    ],
    [
      'cnf x5t#S256 a number',
      async () => ({ bearer: await mint('client-a', { extraClaims: { cnf: { 'x5t#S256': 7 } } }) }),
    ],
    [
      'cnf bound by DPoP (jkt), which this service cannot check',
      async () => ({
        bearer: await mint('client-a', { extraClaims: { cnf: { jkt: certs['client-a']!.thumbprint } } }),
      }),
    ],
    [
      'cnf not an object',
      async () => ({ bearer: await mint('client-a', { extraClaims: { cnf: 'bound' } }) }),
    ],
    [
      'a token without exp',
      async () => {
        const { importJWK } = await import('jose');
        const key = await importJWK(pki.issuer.privateJwk, 'ES256');
        return {
          bearer: await new SignJWT({ client_id: 'client-a' })
            .setProtectedHeader({ alg: 'ES256', kid: pki.issuer.privateJwk.kid as string })
            .setIssuer(TEST_ISSUER)
            .setAudience(TEST_AUDIENCE)
            .setSubject('client-a')
            .sign(key),
        };
      },
    ],
  ];
  for (const path of BEARER_PATHS) {
    it.each(cases)(`${path}: %s`, async (_label, make) => {
      const { response } = await expectRefused({ ...(await make()), path }, 401, UNAUTHENTICATED);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="case-read-service"/);
    });
  }

  it.each(CASE_OPERATIONS)(
    '$id without a bearer token: 401 exactly when its row asks for one',
    async (row) => {
      const path = casePath(row, CRN);
      if (row.bearer) {
        const { response } = await expectRefused({ path, bearer: null }, 401, UNAUTHENTICATED);
        expect(response.headers['www-authenticate']).toBe('Bearer realm="case-read-service"');
      } else {
        // Not 401: answered, as with every credential (client-a holds every case read).
        const { response } = await attempt({ path, bearer: null });
        expect(response.status, response.text).toBe(200);
      }
    },
  );

  it('says invalid_token only when a token was sent (RFC 6750)', async () => {
    const missing = await expectRefused({ bearer: null }, 401, UNAUTHENTICATED);
    expect(missing.response.headers['www-authenticate']).toBe('Bearer realm="case-read-service"');
    const expired = await expectRefused(
      { bearer: await mint('client-a', { issuedAt: new Date(Date.now() - 3_600_000) }) },
      401,
      UNAUTHENTICATED,
    );
    expect(expired.response.headers['www-authenticate']).toMatch(
      /error="invalid_token", error_description="bearer token: the token has expired"/,
    );
  });

  it('a token held as verified is still read by the header rules when sent any other way', async () => {
    const token = await mint('client-a');
    expect((await attempt({ bearer: token })).response.status).toBe(200);
    // Held now: the same token with anything after it, or before it, is not a bearer token.
    await expectRefused({ authorization: `Bearer ${token} x` }, 401, UNAUTHENTICATED);
    await expectRefused({ authorization: `Bearer ${token},${token}` }, 401, UNAUTHENTICATED);
    await expectRefused({ authorization: `Bearer x${token}` }, 401, UNAUTHENTICATED);
    // The scheme is case-insensitive, and more spaces are allowed, as before.
    expect((await attempt({ authorization: `bearer ${token}` })).response.status).toBe(200);
    expect((await attempt({ authorization: `Bearer   ${token}` })).response.status).toBe(200);
  });

  it('accepts a token bound to the presented certificate', async () => {
    const { response } = await attempt({
      bearer: await mint('client-a', { certificateThumbprint: certs['client-a']!.thumbprint }),
    });
    expect(response.status).toBe(200);
  });
});

describe('step 7: on-behalf-of', () => {
  it('required but absent → 401', async () => {
    await expectRefused({ cn: 'obo-required' }, 401, UNAUTHENTICATED);
  });
  it.each([
    ['garbage', async () => 'garbage'],
    [
      'signed by an untrusted key',
      async () => {
        const other = await generateKeyPair('ES256', { extractable: true });
        return mintObo(
          { email: 'officer@probation.example' },
          { key: { ...(await exportJWK(other.privateKey)), kid: 'idp-1', alg: 'ES256' } },
        );
      },
    ],
    [
      'from the wrong issuer',
      async () => mintObo({ email: 'officer@probation.example' }, { issuer: 'https://evil.test' }),
    ],
    [
      'for the wrong audience',
      async () => mintObo({ email: 'officer@probation.example' }, { audience: TEST_AUDIENCE }),
    ],
    ['with no e-mail claim', async () => mintObo({})],
    ['with a malformed e-mail', async () => mintObo({ email: 'not an email' })],
    ['expired', async () => mintObo({ email: 'officer@probation.example' }, { exp: -120 })],
    [
      'bound to another certificate',
      async () =>
        mintObo({ email: 'officer@probation.example', cnf: { 'x5t#S256': certs['client-b']!.thumbprint } }),
    ],
    [
      'with cnf x5t#S256 an array holding the right thumbprint',
      async () =>
        mintObo({
          email: 'officer@probation.example',
          cnf: { 'x5t#S256': [certs['obo-optional']!.thumbprint] },
        }),
    ],
    [
      'bound by DPoP (jkt), which this service cannot check',
      async () => mintObo({ email: 'officer@probation.example', cnf: { jkt: 'x'.repeat(43) } }),
    ],
  ])('an invalid token (%s) → 401', async (_label, make) => {
    await expectRefused({ cn: 'obo-optional', obo: await make() }, 401, UNAUTHENTICATED);
    await expectRefused({ cn: 'obo-required', obo: await make() }, 401, UNAUTHENTICATED);
  });
  it('a token bound to the presented certificate is accepted', async () => {
    const obo = await mintObo({
      email: 'officer@probation.example',
      cnf: { 'x5t#S256': certs['obo-optional']!.thumbprint },
    });
    const { response } = await attempt({ cn: 'obo-optional', obo });
    expect(response.status).toBe(200);
  });
  it('present where forbidden → 400', async () => {
    const { body } = await expectRefused(
      { cn: 'obo-forbidden', obo: await mintObo({ email: 'officer@probation.example' }) },
      400,
      OBO_NOT_ALLOWED,
    );
    expect(body.detail).toMatch(/not configured to act on behalf of a user/);
  });
});

describe('step 8: permissions → 403', () => {
  it.each(OPERATIONS)('%s without its permission', async (permission, path) => {
    const { body } = await expectRefused({ cn: 'narrow', path }, 403, PERMISSION_DENIED);
    expect(body.detail).toBe(`permission ${permission} is not granted to this caller`);
  });
  it('an on-behalf-of user without grants does not widen access', async () => {
    await expectRefused(
      {
        cn: 'obo-optional',
        path: '/case/X123456/community-manager',
        obo: await mintObo({ email: 'nobody@probation.example' }),
      },
      403,
      PERMISSION_DENIED,
    );
  });
});

describe('GET /v1/persons/{crn}/risks/scores: certificate, key and permission; no bearer', () => {
  const path = '/v1/persons/X123456/risks/scores';
  it('without the getRiskScores permission → 403', async () => {
    const { body } = await expectRefused(
      { cn: 'no-risk-scores', path, bearer: null },
      403,
      PERMISSION_DENIED,
    );
    expect(body.detail).toBe('permission getRiskScores is not granted to this caller');
  });
  it('with the permission and no bearer token → 200', async () => {
    const { response } = await attempt({ cn: 'risk-reader', path, bearer: null });
    expect(response.status).toBe(200);
    expect((response.json() as { pagination: { totalCount: number } }).pagination.totalCount).toBe(3);
  });
  it('without a key → 403, like every path', async () => {
    await expectRefused({ cn: 'risk-reader', path, key: null, bearer: null }, 403, ACCESS_DENIED);
  });
});

describe('the order of the checks', () => {
  it('a bad crn with no key is 403, not 400: nothing is validated before the caller is known', async () => {
    await expectRefused({ key: null, path: '/case/bad' }, 403, ACCESS_DENIED);
  });
  it('a bad crn without a bearer token is 401', async () => {
    await expectRefused({ bearer: null, path: '/case/bad' }, 401, UNAUTHENTICATED);
  });
  it('a bad crn without the permission is 403, not 400', async () => {
    await expectRefused({ cn: 'narrow', path: '/case/bad' }, 403, PERMISSION_DENIED);
  });
  it('a bad crn from a fully admitted caller is 400', async () => {
    await expectRefused({ path: '/case/bad' }, 400, 'urn:case-read:problem:invalid-crn');
  });
  it('a wrong key and a bad token together: the key is checked first (403)', async () => {
    await expectRefused({ key: 'nope', bearer: 'garbage' }, 403, ACCESS_DENIED);
  });
});

describe('admitted requests', () => {
  it.each(OPERATIONS)('%s → 200 with every credential', async (_permission, path) => {
    const { response } = await attempt({ path });
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('on-behalf-of grants widen the client base permissions, and the answer is private', async () => {
    const path = '/case/X123456/community-manager';
    await expectRefused({ cn: 'obo-optional', path }, 403, PERMISSION_DENIED);
    const { response } = await attempt({
      cn: 'obo-optional',
      path,
      obo: await mintObo({ email: 'Officer@Probation.Example' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store, private');
    expect((response.json() as { crn: string }).crn).toBe('X123456');
  });

  it('optional on-behalf-of: without the header the base permissions apply', async () => {
    const { response } = await attempt({ cn: 'obo-optional', path: '/case/X123456' });
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('required on-behalf-of with a valid token → 200', async () => {
    const { response } = await attempt({
      cn: 'obo-required',
      obo: await mintObo({ email: 'officer@probation.example' }),
    });
    expect(response.status).toBe(200);
  });

  it('key rotation: two keys of one client both work, until one is revoked, which stops it at once', async () => {
    const second = await service.issueKey('client-a');
    expect((await attempt({ key: keys['client-a']!.key })).response.status).toBe(200);
    expect((await attempt({ key: second.key })).response.status).toBe(200);
    await service.directory.revokeApiKey(second.id, new Date());
    await expectRefused({ key: second.key }, 403, ACCESS_DENIED);
    expect((await attempt({ key: keys['client-a']!.key })).response.status).toBe(200);
  });

  it('suspending a client stops it at once; resuming lets it back', async () => {
    await service.directory.setSuspended('client-b', true);
    await expectRefused({ cn: 'client-b' }, 403, CLIENT_NOT_ALLOWED);
    await service.directory.setSuspended('client-b', false);
    expect((await attempt({ cn: 'client-b' })).response.status).toBe(200);
  });

  it('the keys are stored only as hashes', async () => {
    const stored = await service.directory.findApiKey(keys['client-a']!.id);
    const secret = keys['client-a']!.key.split('_').slice(2).join('_');
    expect(stored?.secretHash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(JSON.stringify(await service.directory.listApiKeys('client-a'))).not.toContain(secret);
  });
});
