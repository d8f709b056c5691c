import pg from 'pg';
import type { ApiKeyRecord, Client, OnBehalfOfMode } from '../../domain/access/model.js';
import { isPermission, type Permission } from '../../domain/access/permissions.js';
import { deepFreeze } from '../../domain/freeze.js';
import type {
  AccessAdministration,
  AccessDirectory,
  CertificateRevocation,
  UserGrant,
} from '../../ports/access-directory.js';
import type { StoreLog } from '../../ports/stores.js';
import { onRequestPath, type PostgresStoreDescription } from './database.js';
import type { PostgresTarget } from './url.js';

/** Every change to the access tables notifies this channel, with the schema as payload. */
export const ACCESS_CHANNEL = 'case_read_access';

export const ACCESS_STORE: PostgresStoreDescription = {
  what: 'access store',
  createHint: 'case-read clients add CN --permissions P --access-store postgres://…',
  migrations: [
    `
    CREATE TABLE clients (
      id               TEXT PRIMARY KEY,
      permissions      TEXT[] NOT NULL,
      suspended        BOOLEAN NOT NULL DEFAULT false,
      rate_limit       TEXT,
      queue_arn        TEXT,
      role_arn         TEXT,
      obo_mode         TEXT NOT NULL DEFAULT 'forbidden' CHECK (obo_mode IN ('forbidden', 'optional', 'required')),
      obo_issuer       TEXT,
      obo_jwks         TEXT,
      obo_audience     TEXT,
      obo_email_claim  TEXT NOT NULL DEFAULT 'email'
    );
    CREATE TABLE api_keys (
      id           TEXT PRIMARY KEY,
      client_id    TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
      secret_hash  TEXT NOT NULL,
      created_at   TIMESTAMPTZ NOT NULL,
      expires_at   TIMESTAMPTZ,
      revoked_at   TIMESTAMPTZ
    );
    CREATE INDEX api_keys_by_client ON api_keys (client_id);
    CREATE TABLE user_grants (
      email       TEXT NOT NULL,
      permission  TEXT NOT NULL,
      PRIMARY KEY (email, permission)
    );
    CREATE TABLE certificate_revocations (
      serial_number  TEXT NOT NULL,
      client_id      TEXT NOT NULL DEFAULT '',
      revoked_at     TIMESTAMPTZ NOT NULL,
      PRIMARY KEY (serial_number, client_id)
    );
    CREATE FUNCTION case_read_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('${ACCESS_CHANNEL}', TG_TABLE_SCHEMA); RETURN NULL; END $$;
    CREATE TRIGGER clients_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON clients
      FOR EACH STATEMENT EXECUTE FUNCTION case_read_access_changed();
    CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
      FOR EACH STATEMENT EXECUTE FUNCTION case_read_access_changed();
    CREATE TRIGGER user_grants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON user_grants
      FOR EACH STATEMENT EXECUTE FUNCTION case_read_access_changed();
    CREATE TRIGGER certificate_revocations_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON certificate_revocations
      FOR EACH STATEMENT EXECUTE FUNCTION case_read_access_changed();
    `,
  ],
};

interface ClientRow {
  id: string;
  permissions: string[];
  suspended: boolean;
  rate_limit: string | null;
  queue_arn: string | null;
  role_arn: string | null;
  obo_mode: OnBehalfOfMode;
  obo_issuer: string | null;
  obo_jwks: string | null;
  obo_audience: string | null;
  obo_email_claim: string;
}
interface KeyRow {
  id: string;
  client_id: string;
  secret_hash: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

const toClient = (row: ClientRow): Client => ({
  id: row.id,
  permissions: row.permissions.filter(isPermission),
  suspended: row.suspended,
  rateLimit: row.rate_limit,
  queueArn: row.queue_arn,
  roleArn: row.role_arn,
  onBehalfOf: {
    mode: row.obo_mode,
    issuer: row.obo_issuer,
    jwks: row.obo_jwks,
    audience: row.obo_audience,
    emailClaim: row.obo_email_claim,
  },
});

const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  clientId: row.client_id,
  secretHash: row.secret_hash,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

const CACHE_LIMIT = 10_000;
const WHAT = 'access store';

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
export class PostgresAccessDirectory implements AccessDirectory, AccessAdministration {
  private readonly clientCache = new Map<string, Client>();
  private readonly keyCache = new Map<string, ApiKeyRecord>();
  private readonly revokedCache = new Map<string, boolean>();
  private readonly grantCache = new Map<string, readonly Permission[]>();
  private listener: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  /** Bumped on every invalidation, so a read that began before it does not fill the cache. */
  private generation = 0;

  constructor(
    private readonly pool: pg.Pool,
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
    this.clientCache.clear();
    this.keyCache.clear();
    this.revokedCache.clear();
    this.grantCache.clear();
  }

  private async cached<K, V>(
    cache: Map<K, V>,
    key: K,
    load: () => Promise<V | undefined>,
  ): Promise<V | undefined> {
    if (this.listening) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
    }
    const generation = this.generation;
    const value = await onRequestPath(WHAT, load);
    if (value !== undefined && this.listening && generation === this.generation) {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(key, deepFreeze(value));
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

  async findClient(id: string): Promise<Client | undefined> {
    return this.cached(this.clientCache, id, async () => {
      const { rows } = await this.pool.query<ClientRow>({
        name: 'access-client',
        text: 'SELECT * FROM clients WHERE id = $1',
        values: [id],
      });
      return rows[0] && toClient(rows[0]);
    });
  }

  async findApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.cached(this.keyCache, id, async () => {
      const { rows } = await this.pool.query<KeyRow>({
        name: 'access-key',
        text: 'SELECT * FROM api_keys WHERE id = $1',
        values: [id],
      });
      return rows[0] && toKey(rows[0]);
    });
  }

  async isCertificateRevoked(serialNumber: string, clientId: string): Promise<boolean> {
    const revoked = await this.cached(this.revokedCache, `${serialNumber} ${clientId}`, async () => {
      const { rowCount } = await this.pool.query({
        name: 'access-revoked',
        text: "SELECT 1 FROM certificate_revocations WHERE serial_number = $1 AND client_id IN ('', $2) LIMIT 1",
        values: [serialNumber, clientId],
      });
      return (rowCount ?? 0) > 0;
    });
    return revoked === true;
  }

  async grantsFor(email: string): Promise<readonly Permission[]> {
    const grants = await this.cached(this.grantCache, email.toLowerCase(), async () => {
      const { rows } = await this.pool.query<{ permission: string }>({
        name: 'access-grants',
        text: 'SELECT permission FROM user_grants WHERE email = $1 ORDER BY permission',
        values: [email.toLowerCase()],
      });
      return rows.map((r) => r.permission).filter(isPermission);
    });
    return grants ?? [];
  }

  async saveClient(client: Client): Promise<void> {
    const o = client.onBehalfOf;
    await this.pool.query(
      `INSERT INTO clients (id, permissions, suspended, rate_limit, queue_arn, role_arn, obo_mode, obo_issuer, obo_jwks, obo_audience, obo_email_claim)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (id) DO UPDATE SET permissions = excluded.permissions, suspended = excluded.suspended,
         rate_limit = excluded.rate_limit, queue_arn = excluded.queue_arn, role_arn = excluded.role_arn,
         obo_mode = excluded.obo_mode, obo_issuer = excluded.obo_issuer, obo_jwks = excluded.obo_jwks,
         obo_audience = excluded.obo_audience, obo_email_claim = excluded.obo_email_claim`,
      [
        client.id,
        client.permissions,
        client.suspended,
        client.rateLimit,
        client.queueArn,
        client.roleArn,
        o.mode,
        o.issuer,
        o.jwks,
        o.audience,
        o.emailClaim,
      ],
    );
  }

  async removeClient(id: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ removed: boolean }>(
      `WITH revocations AS (DELETE FROM certificate_revocations WHERE client_id = $1),
            removed AS (DELETE FROM clients WHERE id = $1 RETURNING 1)
       SELECT count(*) > 0 AS removed FROM removed`,
      [id],
    );
    return rows[0]?.removed === true;
  }

  async listClients(): Promise<Client[]> {
    return (await this.pool.query<ClientRow>('SELECT * FROM clients ORDER BY id')).rows.map(toClient);
  }

  async setSuspended(id: string, suspended: boolean): Promise<boolean> {
    const { rowCount } = await this.pool.query('UPDATE clients SET suspended = $1 WHERE id = $2', [
      suspended,
      id,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async addApiKey(key: ApiKeyRecord): Promise<void> {
    const client = await this.pool.query('SELECT 1 FROM clients WHERE id = $1', [key.clientId]);
    if (client.rowCount === 0) throw new Error(`no client ${key.clientId}`);
    const { rowCount } = await this.pool.query(
      `INSERT INTO api_keys (id, client_id, secret_hash, created_at, expires_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
      [key.id, key.clientId, key.secretHash, key.createdAt, key.expiresAt, key.revokedAt],
    );
    if (rowCount === 0) throw new Error(`key ${key.id} already exists`);
  }

  async listApiKeys(clientId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(
      'SELECT * FROM api_keys WHERE client_id = $1 ORDER BY created_at, id',
      [clientId],
    );
    return rows.map(toKey);
  }

  async revokeApiKey(id: string, at: Date): Promise<boolean> {
    const { rows } = await this.pool.query<{ found: boolean }>(
      `WITH revoked AS (UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL)
       SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $1) AS found`,
      [id, at],
    );
    return rows[0]?.found === true;
  }

  async revokeCertificate(revocation: CertificateRevocation): Promise<void> {
    await this.pool.query(
      `INSERT INTO certificate_revocations (serial_number, client_id, revoked_at) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING`,
      [revocation.serialNumber, revocation.clientId ?? '', revocation.revokedAt],
    );
  }

  async listCertificateRevocations(): Promise<CertificateRevocation[]> {
    const { rows } = await this.pool.query<{ serial_number: string; client_id: string; revoked_at: Date }>(
      'SELECT * FROM certificate_revocations ORDER BY revoked_at, serial_number',
    );
    return rows.map((r) => ({
      serialNumber: r.serial_number,
      clientId: r.client_id === '' ? null : r.client_id,
      revokedAt: r.revoked_at,
    }));
  }

  async addGrant(email: string, permissions: readonly Permission[]): Promise<void> {
    await this.pool.query(
      `INSERT INTO user_grants (email, permission) SELECT $1, p FROM unnest($2::text[]) AS p ON CONFLICT DO NOTHING`,
      [email.toLowerCase(), permissions],
    );
  }

  async removeGrant(email: string, permissions: readonly Permission[]): Promise<void> {
    await this.pool.query('DELETE FROM user_grants WHERE email = $1 AND permission = ANY ($2::text[])', [
      email.toLowerCase(),
      permissions,
    ]);
  }

  async listGrants(): Promise<UserGrant[]> {
    const { rows } = await this.pool.query<{ email: string; permissions: string[] }>(
      'SELECT email, array_agg(permission ORDER BY permission) AS permissions FROM user_grants GROUP BY email ORDER BY email',
    );
    return rows.map((r) => ({ email: r.email, permissions: r.permissions.filter(isPermission) }));
  }
}
