import { describe, expect, it } from 'vitest';
import {
  admitClient,
  checkBearer,
  checkOnBehalfOf,
  effectivePermissions,
  requirePermission,
} from '../../src/domain/access/admit.js';
import { formatApiKey, parseApiKey } from '../../src/domain/access/api-key.js';
import type { ApiKeyRecord, BearerClaims, Client } from '../../src/domain/access/model.js';
import { parsePermissionList } from '../../src/domain/access/permissions.js';
import {
  AccessDeniedError,
  OnBehalfOfNotAllowedError,
  PermissionDeniedError,
  UnauthenticatedError,
} from '../../src/domain/errors.js';
import type { AccessDirectory } from '../../src/ports/access-directory.js';
import {
  ADMISSION_CLIENTS,
  ADMISSION_KEYS,
  ADMISSION_REVOCATIONS,
  cert,
  clock,
  hasher,
  keyFor,
  NOW,
} from '../support/admission.js';
import { AccessMother } from '../support/mothers.js';

function directoryOf(
  clients: readonly Client[],
  keys: readonly ApiKeyRecord[],
  revoked: ReadonlyArray<readonly [string, string | null]> = [],
  grants: Record<string, string[]> = {},
): AccessDirectory {
  return {
    findClient: async (id) => clients.find((c) => c.id === id),
    findApiKey: async (id) => keys.find((k) => k.id === id),
    isCertificateRevoked: async (serial, clientId) =>
      revoked.some(([s, c]) => s === serial && (c === null || c === clientId)),
    grantsFor: async (email) => (grants[email] ?? []) as never,
    noteCertificate: async () => {},
    // Not read by the admission checks tested here.
    claimRenewal: async () => {
      throw new Error('not used');
    },
    completeRenewal: async () => {},
  };
}

describe('API key format', () => {
  it('round-trips crs_<id>_<secret>, secrets may hold underscores', () => {
    const raw = formatApiKey('abcdefgh01234567', `a_b-${'x'.repeat(40)}`);
    expect(parseApiKey(raw)).toEqual({ id: 'abcdefgh01234567', secret: `a_b-${'x'.repeat(40)}` });
  });
  it.each([
    '',
    'crs',
    'crs__',
    `xyz_abcdefgh01234567_${'x'.repeat(43)}`,
    `crs_SHORT_${'x'.repeat(43)}`,
    'crs_abcdefgh01234567_short',
    `crs_abcdefgh01234567_${'x'.repeat(200)}`,
  ])('rejects %j', (raw) => expect(parseApiKey(raw)).toBeUndefined());
});

describe('admitClient (steps 3 and 4)', () => {
  const deps = {
    directory: directoryOf(ADMISSION_CLIENTS, ADMISSION_KEYS, ADMISSION_REVOCATIONS),
    hasher,
    clock,
  };

  it('admits a live key of the certificate client', async () => {
    const admitted = await admitClient(deps, cert('client-a'), keyFor('aaaaaaaaaaaaaaaa'));
    expect(admitted.client.id).toBe('client-a');
    expect(admitted.key.id).toBe('aaaaaaaaaaaaaaaa');
  });

  it('a key revoked for a future moment still works until then', async () => {
    expect((await admitClient(deps, cert('client-a'), keyFor('ffffffffffffffff'))).key.id).toBe(
      'ffffffffffffffff',
    );
  });

  it.each([
    ['missing-key', 'client-a', undefined],
    ['missing-key', 'client-a', ''],
    ['malformed-key', 'client-a', 'Bearer x'],
    ['unknown-key', 'client-a', keyFor('zzzzzzzzzzzzzzzz')],
    ['wrong-key', 'client-a', formatApiKey('aaaaaaaaaaaaaaaa', 'T'.repeat(43))],
    ['revoked-key', 'client-a', keyFor('rrrrrrrrrrrrrrrr')],
    ['expired-key', 'client-a', keyFor('eeeeeeeeeeeeeeee')],
    ['key-of-another-client', 'client-a', keyFor('bbbbbbbbbbbbbbbb')],
    ['unknown-client', 'ghost', keyFor('gggggggggggggggg')],
    ['suspended-client', 'paused', keyFor('pppppppppppppppp')],
  ] as const)('refuses with %s', async (reason, cn, presented) => {
    const error = await admitClient(deps, cert(cn), presented).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AccessDeniedError);
    expect((error as AccessDeniedError).reason).toBe(reason);
  });

  it('refuses a certificate serial revoked globally or for this client only', async () => {
    const global = await admitClient(deps, cert('client-a', 'DEAD'), keyFor('aaaaaaaaaaaaaaaa')).catch(
      (e: unknown) => e,
    );
    expect((global as AccessDeniedError).reason).toBe('revoked-certificate');
    expect((global as AccessDeniedError).kind).toBe('client');
    const local = await admitClient(deps, cert('client-a', 'BEEF'), keyFor('aaaaaaaaaaaaaaaa')).catch(
      (e: unknown) => e,
    );
    expect((local as AccessDeniedError).reason).toBe('revoked-certificate');
    expect((await admitClient(deps, cert('client-b', 'BEEF'), keyFor('bbbbbbbbbbbbbbbb'))).client.id).toBe(
      'client-b',
    );
  });

  it('tells the client only the broad kind of refusal', () => {
    expect(new AccessDeniedError('wrong-key').message).toBe('the API key is missing or invalid');
    expect(new AccessDeniedError('revoked-key').message).toBe('the API key is missing or invalid');
    expect(new AccessDeniedError('suspended-client').message).toBe(
      'this client is not allowed to call the service',
    );
  });
});

describe('checkBearer (step 6)', () => {
  const claims = (overrides: Partial<BearerClaims> = {}): BearerClaims => ({
    clientId: 'client-a',
    certificateThumbprint: null,
    expiresAt: NOW,
    ...overrides,
  });
  const verifierGiving = (c: BearerClaims) => ({ verifier: { verifyBearer: async () => c } });

  it('required: a missing token is a 401 "missing" (no error code in the challenge)', async () => {
    const error = await checkBearer(verifierGiving(claims()), 'required', cert('client-a'), undefined).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as UnauthenticatedError).missing).toBe(true);
  });
  it('optional: no token is fine, a sent token is still checked', async () => {
    await expect(
      checkBearer(verifierGiving(claims()), 'optional', cert('client-a'), undefined),
    ).resolves.toBeUndefined();
    await expect(
      checkBearer(verifierGiving(claims({ clientId: 'other' })), 'optional', cert('client-a'), 't'),
    ).rejects.toThrow('not issued to this client');
  });
  it('off: nothing is checked', async () => {
    const never = { verifier: { verifyBearer: async () => Promise.reject(new Error('must not be called')) } };
    await expect(checkBearer(never, 'off', cert('client-a'), 'anything')).resolves.toBeUndefined();
  });
  it('a certificate-bound token must match the presented certificate', async () => {
    await expect(
      checkBearer(
        verifierGiving(claims({ certificateThumbprint: 'thumb' })),
        'required',
        cert('client-a'),
        't',
      ),
    ).resolves.toBeUndefined();
    await expect(
      checkBearer(
        verifierGiving(claims({ certificateThumbprint: 'other' })),
        'required',
        cert('client-a'),
        't',
      ),
    ).rejects.toThrow('bound to another certificate');
  });
});

describe('checkOnBehalfOf (step 7) and permissions (step 8)', () => {
  const verifier = {
    verifyOnBehalfOf: async () => ({ email: 'officer@probation.example', certificateThumbprint: null }),
  };
  const obo = (mode: 'forbidden' | 'optional' | 'required') =>
    AccessMother.client('client-a', {
      permissions: ['getCase'],
      onBehalfOf: { mode, issuer: 'i', jwks: 'j', audience: 'a', emailClaim: 'email' },
    });

  it('forbidden: absent is fine, present is a 400', async () => {
    expect(await checkOnBehalfOf({ verifier }, obo('forbidden'), cert('client-a'), undefined)).toBeNull();
    await expect(
      checkOnBehalfOf({ verifier }, obo('forbidden'), cert('client-a'), 'token'),
    ).rejects.toBeInstanceOf(OnBehalfOfNotAllowedError);
  });
  it('optional and required verify a present token', async () => {
    expect(await checkOnBehalfOf({ verifier }, obo('optional'), cert('client-a'), 'token')).toEqual({
      email: 'officer@probation.example',
      token: 'token',
    });
    expect(await checkOnBehalfOf({ verifier }, obo('optional'), cert('client-a'), undefined)).toBeNull();
    await expect(
      checkOnBehalfOf({ verifier }, obo('required'), cert('client-a'), undefined),
    ).rejects.toBeInstanceOf(UnauthenticatedError);
  });
  it('a certificate-bound on-behalf-of token counts only with that certificate', async () => {
    const bound = (thumbprint: string | null) => ({
      verifyOnBehalfOf: async () => ({
        email: 'officer@probation.example',
        certificateThumbprint: thumbprint,
      }),
    });
    const own = cert('client-a');
    expect(
      await checkOnBehalfOf({ verifier: bound(own.thumbprintS256) }, obo('optional'), own, 'token'),
    ).toEqual({ email: 'officer@probation.example', token: 'token' });
    await expect(
      checkOnBehalfOf({ verifier: bound('B'.repeat(43)) }, obo('optional'), own, 'token'),
    ).rejects.toThrow('bound to another certificate');
    // Behind a gateway that forwards no certificate, the binding cannot be checked: refused.
    await expect(
      checkOnBehalfOf(
        { verifier: bound(own.thumbprintS256) },
        obo('optional'),
        { ...own, thumbprintS256: null },
        'token',
      ),
    ).rejects.toThrow('bound to another certificate');
  });
  it('grants widen the base permissions by union, only for a verified user', async () => {
    const directory = directoryOf([], [], [], { 'officer@probation.example': ['getCommunityManagerByCrn'] });
    const client = obo('optional');
    expect([...(await effectivePermissions({ directory }, client, null))]).toEqual(['getCase']);
    const widened = await effectivePermissions({ directory }, client, { email: 'officer@probation.example' });
    expect([...widened].sort()).toEqual(['getCase', 'getCommunityManagerByCrn']);
    expect(() => requirePermission({ permissions: widened }, 'getCommunityManagerByCrn')).not.toThrow();
    expect(() => requirePermission({ permissions: widened }, 'issueQueueToken')).toThrow(
      PermissionDeniedError,
    );
  });
  it('deny by default: no permissions, nothing allowed', () => {
    expect(() => requirePermission({ permissions: new Set() }, 'getCase')).toThrow(
      'permission getCase is not granted',
    );
  });
  it('parses permission lists, refusing unknown names', () => {
    expect(parsePermissionList('getCase, getCase,issueQueueToken')).toEqual(['getCase', 'issueQueueToken']);
    expect(() => parsePermissionList('getCase,deleteCase')).toThrow(/unknown permission "deleteCase"/);
    expect(() => parsePermissionList(' , ')).toThrow(/no permissions/);
  });
});
