// What the SQL stores' access directories (SQLite, PostgreSQL) ask alike on the request path:
// each read's statement, the cache and key its answer is kept under and how its rows make it,
// and each write's statement and values. Each store runs them its own way (SQLite on the spot,
// PostgreSQL by a round trip) and keeps its own rule of when its cache may be used.
import type { ApiKeyRecord, Client } from '../../domain/access/model.js';
import { isPermission, type Permission } from '../../domain/access/permissions.js';
import type { AccessDirectory, CertificateSeen, RenewalClaim } from '../../ports/access-directory.js';
import { AccessCache } from './access-cache.js';
import { claimRenewalSql, completeRenewalSql, noteCertificateSql, releaseRenewalSql } from './access-rows.js';

/** An engine's placeholder for the nth value: `?` or `$n`. */
type Placeholder = (n: number) => string;

/** The request path's reads, with the engine's placeholders. */
export const accessReadsSql = (p: Placeholder) => ({
  client: `SELECT * FROM clients WHERE id = ${p(1)}`,
  key: `SELECT * FROM api_keys WHERE id = ${p(1)}`,
  revoked: `SELECT 1 AS found FROM certificate_revocations WHERE serial_number = ${p(1)} AND client_id IN ('', ${p(2)}) LIMIT 1`,
  grants: `SELECT permission FROM user_grants WHERE email = ${p(1)} ORDER BY permission`,
});

export type AccessReadName = keyof ReturnType<typeof accessReadsSql>;

/** One read through the cache: the statement and its values, where its answer is kept, and how its rows make it. */
export interface CachedRead<R, V> {
  readonly name: AccessReadName;
  readonly values: readonly unknown[];
  readonly cache: Map<string, V>;
  readonly key: string;
  /** The answer the rows make; undefined: nothing was found (and nothing is kept). */
  readonly answer: (rows: readonly R[]) => V | undefined;
}

/** How an engine's rows become a client and a key (its `accessRows`). */
interface RowDecoding<ClientRow, KeyRow> {
  toClient(row: ClientRow): Client;
  toKey(row: KeyRow): ApiKeyRecord;
}

/**
 * The request path's cached reads of a SQL access directory: what each asks, where its answer
 * is kept, and how its rows make it. Each is answered by the store's {@link readThroughCache},
 * which holds the store's own rule of when the {@link cache} may be used.
 */
export abstract class CachedAccessReads<ClientRow, KeyRow>
  implements Pick<AccessDirectory, 'findClient' | 'findApiKey' | 'isCertificateRevoked' | 'grantsFor'>
{
  protected readonly cache = new AccessCache();

  constructor(private readonly decoding: RowDecoding<ClientRow, KeyRow>) {}

  /** The cache's answer when the store may use it, else the answer the rows make (kept when found and it may). */
  protected abstract readThroughCache<R, V>(read: CachedRead<R, V>): Promise<V | undefined>;

  findClient(id: string): Promise<Client | undefined> {
    return this.byId('client', this.cache.clients, id, (row: ClientRow) => this.decoding.toClient(row));
  }

  findApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.byId('key', this.cache.keys, id, (row: KeyRow) => this.decoding.toKey(row));
  }

  /** The row of `id` that the read `name` finds, decoded; none when there is no such row. */
  private byId<Row, V>(
    name: 'client' | 'key',
    cache: Map<string, V>,
    id: string,
    decode: (row: Row) => V,
  ): Promise<V | undefined> {
    return this.readThroughCache<Row, V>({
      name,
      values: [id],
      cache,
      key: id,
      answer: ([row]) => (row === undefined ? undefined : decode(row)),
    });
  }

  async isCertificateRevoked(serialNumber: string, clientId: string): Promise<boolean> {
    const revoked = await this.readThroughCache<unknown, boolean>({
      name: 'revoked',
      values: [serialNumber, clientId],
      cache: this.cache.revoked,
      key: AccessCache.revocationKey(serialNumber, clientId),
      answer: (found) => found.length > 0,
    });
    return revoked === true;
  }

  async grantsFor(email: string): Promise<readonly Permission[]> {
    const key = email.toLowerCase();
    const grants = await this.readThroughCache<{ permission: string }, readonly Permission[]>({
      name: 'grants',
      values: [key],
      cache: this.cache.grants,
      key,
      answer: (found) => found.map((r) => r.permission).filter(isPermission),
    });
    return grants ?? [];
  }
}

/** A write of the request path: its name (PostgreSQL prepares it by that name), text and values. */
export interface AccessWrite {
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

/** How an engine encodes a write's values (its `accessRows`). */
interface ValueEncoding {
  certificateSeenValues(seen: CertificateSeen): unknown[];
  renewalClaimValues(claim: RenewalClaim): unknown[];
}

/** The request path's writes, with the engine's placeholders and encoding (`timeCast` after a time value). */
export function accessWrites(p: Placeholder, rows: ValueEncoding, timeCast = '') {
  return {
    /** What a client presented ({@link noteCertificateSql}). */
    noteCertificate: (seen: CertificateSeen): AccessWrite => ({
      name: 'access-note-certificate',
      text: noteCertificateSql(p, timeCast),
      values: rows.certificateSeenValues(seen),
    }),
    /** A claim to renew a certificate, which only the first one makes ({@link claimRenewalSql}). */
    claimRenewal: (claim: RenewalClaim): AccessWrite => ({
      name: 'access-claim-renewal',
      text: claimRenewalSql(p),
      values: rows.renewalClaimValues(claim),
    }),
    /** The certificate issued for a claim; none (null): the claim released, so it may be made again. */
    completeRenewal: (serialNumber: string, issuedSerialNumber: string | null): AccessWrite =>
      issuedSerialNumber === null
        ? { name: 'access-release-renewal', text: releaseRenewalSql(p), values: [serialNumber] }
        : {
            name: 'access-complete-renewal',
            text: completeRenewalSql(p),
            values: [issuedSerialNumber, serialNumber],
          },
  };
}
