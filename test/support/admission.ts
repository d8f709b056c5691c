import { formatApiKey } from '../../src/domain/access/api-key.js';
import type { ApiKeyRecord, Client, ClientCertificate } from '../../src/domain/access/model.js';
import { AccessMother } from './mothers.js';

/*
 * What the domain's admission tests (steps 3–8) share: a fixed clock, a stand-in hash, keys
 * of one secret, certificates, and one table of clients, keys and revocations with a case of
 * every refusal.
 */

export const NOW = new Date('2026-06-01T12:00:00Z');
export const clock = { now: () => NOW };
/** A stand-in hash: the domain only asks "does this secret match this hash". */
export const hasher = { matches: (secret: string, hash: string) => hash === `h(${secret})` };
export const SECRET = 'S'.repeat(43);
/** The full presented key of id `id` and {@link SECRET}. */
export const keyFor = (id: string) => formatApiKey(id, SECRET);

/** A stored key of {@link SECRET}. */
export const key = (id: string, clientId: string, overrides: Partial<ApiKeyRecord> = {}) =>
  AccessMother.key(id, clientId, { secretHash: `h(${SECRET})`, ...overrides });

export const cert = (cn: string, serial = 'AB12'): ClientCertificate => ({
  commonName: cn,
  serialNumber: serial,
  thumbprintS256: 'thumb',
  notAfter: null,
});

/** Two active clients and a suspended one. */
export const ADMISSION_CLIENTS: readonly Client[] = [
  AccessMother.client('client-a'),
  AccessMother.client('client-b'),
  AccessMother.client('paused', { suspended: true }),
];

/** A live key each, one revoked, one revoked from a later moment, one expired, one of an unknown client. */
export const ADMISSION_KEYS: readonly ApiKeyRecord[] = [
  key('aaaaaaaaaaaaaaaa', 'client-a'),
  key('bbbbbbbbbbbbbbbb', 'client-b'),
  key('rrrrrrrrrrrrrrrr', 'client-a', { revokedAt: new Date(NOW.getTime() - 1) }),
  key('ffffffffffffffff', 'client-a', { revokedAt: new Date(NOW.getTime() + 60_000) }),
  key('eeeeeeeeeeeeeeee', 'client-a', { expiresAt: NOW }),
  key('gggggggggggggggg', 'ghost'),
  key('pppppppppppppppp', 'paused'),
];

/** Serial `DEAD` revoked for every client, `BEEF` for client-a only. */
export const ADMISSION_REVOCATIONS: ReadonlyArray<readonly [string, string | null]> = [
  ['DEAD', null],
  ['BEEF', 'client-a'],
];
