import { describe, expect, it } from 'vitest';
import { InMemoryRateLimiter } from '../../src/adapters/memory/rate-limiter.js';
import {
  admitClient,
  admitClientHeld,
  checkBearer,
  checkBearerHeld,
  checkHeldBearer,
  checkOnBehalfOf,
  withoutOnBehalfOf,
} from '../../src/domain/access/admit.js';
import { formatApiKey } from '../../src/domain/access/api-key.js';
import type { BearerClaims } from '../../src/domain/access/model.js';
import { applyRateLimit, applyRateLimitNow } from '../../src/domain/access/rate-limit.js';
import type { AccessDirectory, HeldAdmission } from '../../src/ports/access-directory.js';
import type { RateLimiter } from '../../src/ports/rate-limiter.js';
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

/*
 * The request path decides what the process holds at once (decisions §1 steps 3–8, without a
 * promise turn), and waits on the ports for the rest. Both ways must decide alike: the same
 * admission, the same refusal with the same reason, for every case the waiting way knows.
 */

const clients = ADMISSION_CLIENTS;
const keys = ADMISSION_KEYS;
const revoked = (serial: string, clientId: string) =>
  ADMISSION_REVOCATIONS.some(([s, c]) => s === serial && (c === null || c === clientId));

/** The waiting reads, and what a reader holding all of them answers at once. */
const directory: AccessDirectory = {
  findClient: async (id) => clients.find((c) => c.id === id),
  findApiKey: async (id) => keys.find((k) => k.id === id),
  isCertificateRevoked: async (serial, clientId) => revoked(serial, clientId),
  heldAdmission: (keyId, clientId, serial): HeldAdmission | undefined => {
    const held = keys.find((k) => k.id === keyId);
    const client = clients.find((c) => c.id === clientId);
    return held && client && { key: held, client, revoked: revoked(serial, clientId) };
  },
  grantsFor: async () => [],
  noteCertificate: async () => {},
  claimRenewal: async () => false,
  completeRenewal: async () => {},
};
const deps = { directory, hasher, clock };

/** What a call decided: its value, or the refusal's class and reason. */
async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return { value: await run() };
  } catch (error) {
    const { name, reason, message } = error as Error & { reason?: string };
    return { refused: name, reason, message };
  }
}

describe('admission decided at once decides as admission waited for', () => {
  // The case, the certificate, the key presented, and whether it is decided at once: a key
  // or client the directory does not hold (it holds only what it found) is waited for.
  it.each([
    ['a live key', 'client-a', 'AB12', keyFor('aaaaaaaaaaaaaaaa'), true],
    ['a key revoked from a later moment', 'client-a', 'AB12', keyFor('ffffffffffffffff'), true],
    ['no key', 'client-a', 'AB12', undefined, true],
    ['an empty key', 'client-a', 'AB12', '', true],
    ['a malformed key', 'client-a', 'AB12', 'Bearer x', true],
    ['an unknown key', 'client-a', 'AB12', keyFor('zzzzzzzzzzzzzzzz'), false],
    ['a wrong secret', 'client-a', 'AB12', formatApiKey('aaaaaaaaaaaaaaaa', 'T'.repeat(43)), true],
    ['a revoked key', 'client-a', 'AB12', keyFor('rrrrrrrrrrrrrrrr'), true],
    ['an expired key', 'client-a', 'AB12', keyFor('eeeeeeeeeeeeeeee'), true],
    ["another client's key", 'client-a', 'AB12', keyFor('bbbbbbbbbbbbbbbb'), true],
    ['an unknown client', 'ghost', 'AB12', keyFor('gggggggggggggggg'), false],
    ['a suspended client', 'paused', 'AB12', keyFor('pppppppppppppppp'), true],
    ['a certificate revoked for every client', 'client-a', 'DEAD', keyFor('aaaaaaaaaaaaaaaa'), true],
    ['a certificate revoked for this client', 'client-a', 'BEEF', keyFor('aaaaaaaaaaaaaaaa'), true],
    ["another client's revocation", 'client-b', 'BEEF', keyFor('bbbbbbbbbbbbbbbb'), true],
  ] as const)('%s', async (_case, cn, serial, presented, atOnceDecides) => {
    const waited = await outcome(() => admitClient(deps, cert(cn, serial), presented));
    let decided = true;
    const atOnce = await outcome(() => {
      const held = admitClientHeld(deps, cert(cn, serial), presented);
      if (held !== undefined) return held;
      decided = false;
      return admitClient(deps, cert(cn, serial), presented);
    });
    expect(atOnce).toEqual(waited);
    expect(decided).toBe(atOnceDecides);
  });

  it('says nothing (undefined) when the directory holds nothing, or offers no held reads', () => {
    const holdsNothing = { ...deps, directory: { ...directory, heldAdmission: () => undefined } };
    expect(admitClientHeld(holdsNothing, cert('client-a'), keyFor('aaaaaaaaaaaaaaaa'))).toBeUndefined();
    const { heldAdmission: _none, ...waitingOnly } = directory;
    expect(
      admitClientHeld({ ...deps, directory: waitingOnly }, cert('client-a'), keyFor('aaaaaaaaaaaaaaaa')),
    ).toBeUndefined();
    // A refusal that needs no directory is made at once all the same.
    expect(() => admitClientHeld(holdsNothing, cert('client-a'), undefined)).toThrow(
      'the API key is missing or invalid',
    );
  });
});

describe('the bearer token decided at once decides as the token waited for', () => {
  const claims = (overrides: Partial<BearerClaims> = {}): BearerClaims => ({
    clientId: 'client-a',
    certificateThumbprint: null,
    expiresAt: NOW,
    ...overrides,
  });
  const holding = (held: BearerClaims | undefined) => ({
    verifier: {
      verifyBearer: async () => held ?? Promise.reject(new Error('must not be waited for')),
      heldBearer: () => held,
    },
  });

  it.each([
    ['required, no token', 'required', claims(), undefined],
    ['optional, no token', 'optional', claims(), undefined],
    ['off, any token', 'off', claims(), 'anything'],
    ['a token of this client', 'required', claims(), 't'],
    ['a token of another client', 'optional', claims({ clientId: 'other' }), 't'],
    ['a token bound to this certificate', 'required', claims({ certificateThumbprint: 'thumb' }), 't'],
    ['a token bound to another certificate', 'required', claims({ certificateThumbprint: 'other' }), 't'],
  ] as const)('%s', async (_case, mode, held, token) => {
    const waited = await outcome(() => checkBearer(holding(held), mode, cert('client-a'), token));
    const atOnce = await outcome(() => {
      if (!checkBearerHeld(holding(held), mode, cert('client-a'), token)) throw new Error('not decided');
      return undefined;
    });
    expect(atOnce).toEqual(waited);
    // A token sent that the verifier holds, its claims in hand, is decided alike too.
    if (token !== undefined) {
      expect(await outcome(() => checkHeldBearer(mode, cert('client-a'), held))).toEqual(waited);
    }
  });

  it('is not decided (false) for a token the verifier does not hold', () => {
    expect(checkBearerHeld(holding(undefined), 'required', cert('client-a'), 't')).toBe(false);
    expect(checkBearerHeld({ verifier: {} }, 'required', cert('client-a'), 't')).toBe(false);
  });
});

describe('no on-behalf-of token, decided at once', () => {
  const verifier = { verifyOnBehalfOf: async () => Promise.reject(new Error('must not be called')) };
  it.each(['forbidden', 'optional', 'required'] as const)('%s', async (mode) => {
    const client = AccessMother.client('client-a', {
      onBehalfOf: { mode, issuer: 'i', jwks: 'j', audience: 'a', emailClaim: 'email' },
    });
    expect(await outcome(() => withoutOnBehalfOf(client))).toEqual(
      await outcome(() => checkOnBehalfOf({ verifier }, client, cert('client-a'), undefined)),
    );
  });
});

describe('the rate limit counted at once counts as the rate limit waited for', () => {
  const quota = { limit: 3, windowMs: 60_000 };
  const limitClock = { now: () => new Date('2026-01-01T00:00:00.250Z') };

  it('the same decisions, in one count, and the same refusal', async () => {
    const limiter = new InMemoryRateLimiter();
    const deps = { limiter, clock: limitClock };
    const decisions = [
      await outcome(() => applyRateLimit(deps, 'k', quota)),
      await outcome(() => applyRateLimitNow(deps, 'k', quota)),
      await outcome(() => applyRateLimit(deps, 'k', quota)),
      await outcome(() => applyRateLimitNow(deps, 'k', quota)),
    ];
    expect(decisions.map((d) => (d as { value?: { remaining: number } }).value?.remaining)).toEqual([
      2,
      1,
      0,
      undefined,
    ]);
    expect(decisions[3]).toMatchObject({ refused: 'RateLimitedError' });
    expect(decisions[3]).toEqual(await outcome(() => applyRateLimit(deps, 'k', quota)));
  });

  it('a limiter that counts elsewhere is not asked at once: nothing decided, nothing counted', async () => {
    const counted: string[] = [];
    const limiter: RateLimiter = {
      consume: async (k: string) => {
        counted.push(k);
        return { allowed: true, limit: 3, remaining: 2, resetMs: 1, windowMs: 60_000 };
      },
    };
    expect(applyRateLimitNow({ limiter, clock: limitClock }, 'k', quota)).toBeUndefined();
    expect(counted).toEqual([]);
  });
});
