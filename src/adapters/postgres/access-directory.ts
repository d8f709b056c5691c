import pg from 'pg';
import type { ApiKeyRecord, Client } from '../../domain/access/model.js';
import { isPermission, type Permission } from '../../domain/access/permissions.js';
import type {
  AccessDirectory,
  CertificateSeen,
  HeldAdmission,
  RenewalClaim,
} from '../../ports/access-directory.js';
import type { StoreLog } from '../../ports/stores.js';
import { AccessCache } from '../shared/access-cache.js';
import {
  claimRenewalSql,
  completeRenewalSql,
  noteCertificateSql,
  releaseRenewalSql,
} from '../shared/access-rows.js';
import { ACCESS_CHANNEL, type PostgresClientRow, type PostgresKeyRow, ROWS, WHAT } from './access-schema.js';
import { onRequestPath } from './database.js';
import type { PostgresTarget } from './url.js';

/**
 * The access directory in PostgreSQL, shared by every instance.
 *
 * Reads are cached per instance, and a change made anywhere reaches every instance through
 * LISTEN/NOTIFY: a statement trigger on each table notifies `case_read_access` when it
 * commits, and each instance's listening connection drops its cache on the notification
 * (in practice within milliseconds). While the listening connection is down the cache is
 * not used at all (every read goes to the database) and it is re-established every
 * second, so a change can never be hidden by a stale cache for longer than it takes the
 * notification to arrive.
 */
export class PostgresAccessDirectory implements AccessDirectory {
  private readonly cache = new AccessCache();
  private listener: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  /** Bumped on every invalidation, so a read that began before it does not fill the cache. */
  private generation = 0;

  constructor(
    protected readonly pool: pg.Pool,
    private readonly target: PostgresTarget,
    private readonly log: StoreLog = () => {},
  ) {}

  /** Starts listening for changes; reads are cached only while this connection is up. */
  async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.target.connectionString,
      connectionTimeoutMillis: 2000,
      application_name: `case-read access listener ${this.target.schema}`,
    });
    const lost = (error?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.listening = false;
      this.invalidate();
      client.end().catch(() => {});
      if (!this.closed) {
        this.log(
          'warn',
          { store: WHAT, err: error?.message },
          'access store change listener lost; reading uncached',
        );
        this.scheduleListen();
      }
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.payload === this.target.schema) this.invalidate();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${ACCESS_CHANNEL}`);
    } catch {
      client.end().catch(() => {});
      this.scheduleListen();
      return;
    }
    this.listener = client;
    // Anything cached before now may predate a change we could not hear about.
    this.invalidate();
    this.listening = true;
  }

  /**
   * Resolves once every change committed before the call has reached this instance's cache:
   * the server sends a notification before the answer to any later query on the listening
   * connection. (For tests and tools; requests never wait on it.)
   */
  async sync(): Promise<void> {
    await this.listener?.query('SELECT 1');
  }

  private scheduleListen(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.listen().then(() => {
        if (this.listening)
          this.log('info', { store: WHAT }, 'access store change listener back; caching again');
      });
    }, 1000);
    this.retry.unref();
  }

  private invalidate(): void {
    this.generation++;
    this.cache.clear();
  }

  private async cached<V>(
    cache: Map<string, V>,
    key: string,
    load: () => Promise<V | undefined>,
  ): Promise<V | undefined> {
    if (this.listening) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
    }
    const generation = this.generation;
    const value = await onRequestPath(WHAT, load);
    if (value !== undefined && this.listening && generation === this.generation) {
      AccessCache.remember(cache, key, value);
    }
    return value;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
  }

  /** The rows of one prepared read on the request path. */
  private async rowsOf<R extends pg.QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<R[]> {
    return (await this.pool.query<R>({ name, text, values })).rows;
  }

  /** Held only while the change listener is up: without it nothing cached is trusted. */
  heldAdmission(keyId: string, clientId: string, serialNumber: string): HeldAdmission | undefined {
    return this.listening ? this.cache.admission(keyId, clientId, serialNumber) : undefined;
  }

  findClient(id: string): Promise<Client | undefined> {
    return this.cached(this.cache.clients, id, async () => {
      const [row] = await this.rowsOf<PostgresClientRow>(
        'access-client',
        'SELECT * FROM clients WHERE id = $1',
        [id],
      );
      return row && ROWS.toClient(row);
    });
  }

  findApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.cached(this.cache.keys, id, async () => {
      const [row] = await this.rowsOf<PostgresKeyRow>('access-key', 'SELECT * FROM api_keys WHERE id = $1', [
        id,
      ]);
      return row && ROWS.toKey(row);
    });
  }

  async isCertificateRevoked(serialNumber: string, clientId: string): Promise<boolean> {
    const revoked = await this.cached(
      this.cache.revoked,
      AccessCache.revocationKey(serialNumber, clientId),
      async () =>
        (
          await this.rowsOf(
            'access-revoked',
            "SELECT 1 FROM certificate_revocations WHERE serial_number = $1 AND client_id IN ('', $2) LIMIT 1",
            [serialNumber, clientId],
          )
        ).length > 0,
    );
    return revoked === true;
  }

  async noteCertificate(seen: CertificateSeen): Promise<void> {
    await this.pool.query({
      name: 'access-note-certificate',
      text: noteCertificateSql((n) => `$${n}`, '::timestamptz'),
      values: ROWS.certificateSeenValues(seen),
    });
  }

  /**
   * One `INSERT … ON CONFLICT DO NOTHING`: of concurrent claims, on any instance, the one
   * whose row commits first is true (the others wait for it, then insert nothing). A failure
   * is a `StoreUnavailableError` (503).
   */
  async claimRenewal(claim: RenewalClaim): Promise<boolean> {
    const { rowCount } = await onRequestPath(WHAT, () =>
      this.pool.query({
        name: 'access-claim-renewal',
        text: claimRenewalSql((n) => `$${n}`),
        values: ROWS.renewalClaimValues(claim),
      }),
    );
    return (rowCount ?? 0) > 0;
  }

  async completeRenewal(serialNumber: string, issuedSerialNumber: string | null): Promise<void> {
    await onRequestPath(WHAT, () =>
      issuedSerialNumber === null
        ? this.pool.query({
            name: 'access-release-renewal',
            text: releaseRenewalSql((n) => `$${n}`),
            values: [serialNumber],
          })
        : this.pool.query({
            name: 'access-complete-renewal',
            text: completeRenewalSql((n) => `$${n}`),
            values: [issuedSerialNumber, serialNumber],
          }),
    );
  }

  async grantsFor(email: string): Promise<readonly Permission[]> {
    const grants = await this.cached(this.cache.grants, email.toLowerCase(), async () => {
      const rows = await this.rowsOf<{ permission: string }>(
        'access-grants',
        'SELECT permission FROM user_grants WHERE email = $1 ORDER BY permission',
        [email.toLowerCase()],
      );
      return rows.map((r) => r.permission).filter(isPermission);
    });
    return grants ?? [];
  }
}
