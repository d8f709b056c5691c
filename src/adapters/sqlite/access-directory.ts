import type { ApiKeyRecord, Client, OnBehalfOfMode } from '../../domain/access/model.js';
import { isPermission, type Permission } from '../../domain/access/permissions.js';
import { deepFreeze } from '../../domain/freeze.js';
import type {
  AccessAdministration,
  AccessDirectory,
  CertificateRevocation,
  UserGrant,
} from '../../ports/access-directory.js';
import { StoreError } from '../../ports/stores.js';
import {
  openReadOnlyStore,
  openWritableStore,
  reading,
  type StoreDescription,
  transaction,
} from './database.js';
import type { SqlDatabase, SqliteDriver } from './driver.js';

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE clients (
    id                 TEXT PRIMARY KEY NOT NULL,
    permissions        TEXT NOT NULL,             -- comma-separated operation ids
    suspended          INTEGER NOT NULL DEFAULT 0 CHECK (suspended IN (0, 1)),
    rate_limit         TEXT,
    queue_arn          TEXT,
    role_arn           TEXT,
    obo_mode           TEXT NOT NULL DEFAULT 'forbidden' CHECK (obo_mode IN ('forbidden', 'optional', 'required')),
    obo_issuer         TEXT,
    obo_jwks           TEXT,
    obo_audience       TEXT,
    obo_email_claim    TEXT NOT NULL DEFAULT 'email'
  ) WITHOUT ROWID;

  CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY NOT NULL,
    client_id    TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    secret_hash  TEXT NOT NULL,
    created_at   INTEGER NOT NULL,               -- epoch milliseconds
    expires_at   INTEGER,
    revoked_at   INTEGER
  ) WITHOUT ROWID;
  CREATE INDEX api_keys_by_client ON api_keys (client_id);

  CREATE TABLE user_grants (
    email       TEXT NOT NULL,                    -- lower case
    permission  TEXT NOT NULL,
    PRIMARY KEY (email, permission)
  ) WITHOUT ROWID;

  CREATE TABLE certificate_revocations (
    serial_number  TEXT NOT NULL,
    client_id      TEXT NOT NULL DEFAULT '',      -- '' revokes for every client
    revoked_at     INTEGER NOT NULL,
    PRIMARY KEY (serial_number, client_id)
  ) WITHOUT ROWID;
  `,
];

interface ClientRow {
  id: string;
  permissions: string;
  suspended: 0 | 1;
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
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

const toClient = (row: ClientRow): Client => ({
  id: row.id,
  permissions: row.permissions.split(',').filter(isPermission),
  suspended: row.suspended === 1,
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
  createdAt: new Date(row.created_at),
  expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
  revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
});

export class AccessStoreError extends StoreError {
  override readonly name = 'AccessStoreError';
}

const ACCESS_STORE: StoreDescription = {
  what: 'access store',
  migrations: MIGRATIONS,
  createHint: 'case-read clients add CN --permissions P --access-store sqlite:PATH',
  error: (message) => new AccessStoreError(message),
};

/** At most this many entries per cache; past it the cache starts again empty. */
const CACHE_LIMIT = 10_000;

/** Writes made through any access directory of this process (see `fresh`). */
let localWrites = 0;

/**
 * The access directory in a SQLite file. `serve` opens it read-only; the CLI opens it for
 * writing; WAL lets both run at once.
 *
 * Reads are cached until the data changes: SQLite's `PRAGMA data_version` moves whenever
 * another connection commits, and the cache is dropped when it has. It is asked once per
 * event-loop turn (see `fresh`), so a key revoked by `case-read keys revoke` stops working
 * on the very next request, while a steady stream of requests costs one cheap pragma per
 * turn instead of three lookups per request. Answers are frozen, so no caller can change what the next one reads. Lookups
 * that find nothing are not cached (an unknown key id cannot grow the cache).
 */
export class SqliteAccessDirectory implements AccessDirectory, AccessAdministration {
  private readonly stmts;
  private version = Number.NaN;
  private readonly clientCache = new Map<string, Client>();
  private readonly keyCache = new Map<string, ApiKeyRecord>();
  private readonly revokedCache = new Map<string, boolean>();
  private readonly grantCache = new Map<string, readonly Permission[]>();

  private constructor(private readonly db: SqlDatabase) {
    this.stmts = {
      client: db.prepare<[string], ClientRow>('SELECT * FROM clients WHERE id = ?'),
      clients: db.prepare<[], ClientRow>('SELECT * FROM clients ORDER BY id'),
      key: db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?'),
      keysOf: db.prepare<[string], KeyRow>(
        'SELECT * FROM api_keys WHERE client_id = ? ORDER BY created_at, id',
      ),
      revoked: db.prepare<[string, string], { found: 1 }>(
        "SELECT 1 AS found FROM certificate_revocations WHERE serial_number = ? AND client_id IN ('', ?) LIMIT 1",
      ),
      grants: db.prepare<[string], { permission: string }>(
        'SELECT permission FROM user_grants WHERE email = ? ORDER BY permission',
      ),
      dataVersion: db.prepare<[], { data_version: number }>('PRAGMA data_version'),
    };
  }

  /** True while this event-loop turn has already asked SQLite for `data_version`… */
  private checkedThisTurn = false;
  /** …and no connection of this process has written since. */
  private checkedAtWrites = -1;

  /**
   * Drops every cached answer when anything has been committed since the last check. The
   * check is made once per event-loop turn, not once per lookup: the lookups of the
   * requests handled in one turn share it, and the first lookup of any later turn (so of
   * any request that arrives after a revocation is committed) makes a new one. A write
   * through any connection of this process forces a new check at once.
   */
  private fresh(): void {
    if (this.checkedThisTurn && this.checkedAtWrites === localWrites) return;
    this.checkedThisTurn = true;
    this.checkedAtWrites = localWrites;
    setImmediate(() => {
      this.checkedThisTurn = false;
    });
    const version = this.stmts.dataVersion.get()?.data_version ?? 0;
    if (version === this.version) return;
    this.version = version;
    this.clientCache.clear();
    this.keyCache.clear();
    this.revokedCache.clear();
    this.grantCache.clear();
  }

  private static remember<K, V>(cache: Map<K, V>, key: K, value: V): V {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, value);
    return value;
  }

  /** Opens a store for reading only; it must exist and be at the current schema version. */
  static openReadOnly(path: string, driver?: SqliteDriver): SqliteAccessDirectory {
    return new SqliteAccessDirectory(openReadOnlyStore(path, ACCESS_STORE, driver));
  }

  /** Opens (creating and migrating if needed) a store for the operator's changes. */
  static open(path: string, driver?: SqliteDriver): SqliteAccessDirectory {
    return new SqliteAccessDirectory(openWritableStore(path, ACCESS_STORE, driver));
  }

  close(): void {
    this.db.close();
  }

  /** For readiness: throws when the store cannot be read. */
  ping(): void {
    this.stmts.dataVersion.get();
    this.db.prepare('SELECT 1 FROM clients LIMIT 1').get();
  }

  async findClient(id: string): Promise<Client | undefined> {
    return reading('access store', () => {
      this.fresh();
      const cached = this.clientCache.get(id);
      if (cached) return cached;
      const row = this.stmts.client.get(id);
      return row && SqliteAccessDirectory.remember(this.clientCache, id, deepFreeze(toClient(row)));
    });
  }

  async findApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    return reading('access store', () => {
      this.fresh();
      const cached = this.keyCache.get(id);
      if (cached) return cached;
      const row = this.stmts.key.get(id);
      return row && SqliteAccessDirectory.remember(this.keyCache, id, deepFreeze(toKey(row)));
    });
  }

  async isCertificateRevoked(serialNumber: string, clientId: string): Promise<boolean> {
    return reading('access store', () => {
      this.fresh();
      const key = `${serialNumber} ${clientId}`;
      const cached = this.revokedCache.get(key);
      if (cached !== undefined) return cached;
      return SqliteAccessDirectory.remember(
        this.revokedCache,
        key,
        this.stmts.revoked.get(serialNumber, clientId) !== undefined,
      );
    });
  }

  async grantsFor(email: string): Promise<readonly Permission[]> {
    return reading('access store', () => {
      this.fresh();
      const key = email.toLowerCase();
      const cached = this.grantCache.get(key);
      if (cached) return cached;
      const grants = this.stmts.grants
        .all(key)
        .map((r) => r.permission)
        .filter(isPermission);
      return SqliteAccessDirectory.remember(this.grantCache, key, Object.freeze(grants));
    });
  }

  async saveClient(client: Client): Promise<void> {
    localWrites++;
    this.db
      .prepare(
        `INSERT INTO clients (id, permissions, suspended, rate_limit, queue_arn, role_arn, obo_mode, obo_issuer, obo_jwks, obo_audience, obo_email_claim)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET permissions = excluded.permissions, suspended = excluded.suspended,
           rate_limit = excluded.rate_limit, queue_arn = excluded.queue_arn, role_arn = excluded.role_arn,
           obo_mode = excluded.obo_mode, obo_issuer = excluded.obo_issuer, obo_jwks = excluded.obo_jwks,
           obo_audience = excluded.obo_audience, obo_email_claim = excluded.obo_email_claim`,
      )
      .run(
        client.id,
        client.permissions.join(','),
        client.suspended ? 1 : 0,
        client.rateLimit,
        client.queueArn,
        client.roleArn,
        client.onBehalfOf.mode,
        client.onBehalfOf.issuer,
        client.onBehalfOf.jwks,
        client.onBehalfOf.audience,
        client.onBehalfOf.emailClaim,
      );
  }

  async removeClient(id: string): Promise<boolean> {
    localWrites++;
    return transaction(this.db, () => {
      this.db.prepare('DELETE FROM certificate_revocations WHERE client_id = ?').run(id);
      return this.db.prepare('DELETE FROM clients WHERE id = ?').run(id).changes > 0;
    });
  }

  async listClients(): Promise<Client[]> {
    return this.stmts.clients.all().map(toClient);
  }

  async setSuspended(id: string, suspended: boolean): Promise<boolean> {
    localWrites++;
    return (
      this.db.prepare('UPDATE clients SET suspended = ? WHERE id = ?').run(suspended ? 1 : 0, id).changes > 0
    );
  }

  async addApiKey(key: ApiKeyRecord): Promise<void> {
    localWrites++;
    if (this.stmts.client.get(key.clientId) === undefined) throw new Error(`no client ${key.clientId}`);
    if (this.stmts.key.get(key.id) !== undefined) throw new Error(`key ${key.id} already exists`);
    this.db
      .prepare(
        'INSERT INTO api_keys (id, client_id, secret_hash, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        key.id,
        key.clientId,
        key.secretHash,
        key.createdAt.getTime(),
        key.expiresAt?.getTime() ?? null,
        key.revokedAt?.getTime() ?? null,
      );
  }

  async listApiKeys(clientId: string): Promise<ApiKeyRecord[]> {
    return this.stmts.keysOf.all(clientId).map(toKey);
  }

  async revokeApiKey(id: string, at: Date): Promise<boolean> {
    localWrites++;
    if (this.stmts.key.get(id) === undefined) return false;
    this.db
      .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
      .run(at.getTime(), id);
    return true;
  }

  async revokeCertificate(revocation: CertificateRevocation): Promise<void> {
    localWrites++;
    this.db
      .prepare(
        'INSERT OR IGNORE INTO certificate_revocations (serial_number, client_id, revoked_at) VALUES (?, ?, ?)',
      )
      .run(revocation.serialNumber, revocation.clientId ?? '', revocation.revokedAt.getTime());
  }

  async listCertificateRevocations(): Promise<CertificateRevocation[]> {
    return this.db
      .prepare<[], { serial_number: string; client_id: string; revoked_at: number }>(
        'SELECT * FROM certificate_revocations ORDER BY revoked_at, serial_number',
      )
      .all()
      .map((r) => ({
        serialNumber: r.serial_number,
        clientId: r.client_id === '' ? null : r.client_id,
        revokedAt: new Date(r.revoked_at),
      }));
  }

  async addGrant(email: string, permissions: readonly Permission[]): Promise<void> {
    localWrites++;
    const insert = this.db.prepare('INSERT OR IGNORE INTO user_grants (email, permission) VALUES (?, ?)');
    transaction(this.db, () => {
      for (const p of permissions) insert.run(email.toLowerCase(), p);
    });
  }

  async removeGrant(email: string, permissions: readonly Permission[]): Promise<void> {
    localWrites++;
    const remove = this.db.prepare('DELETE FROM user_grants WHERE email = ? AND permission = ?');
    transaction(this.db, () => {
      for (const p of permissions) remove.run(email.toLowerCase(), p);
    });
  }

  async listGrants(): Promise<UserGrant[]> {
    const rows = this.db
      .prepare<[], { email: string; permission: string }>(
        'SELECT email, permission FROM user_grants ORDER BY email, permission',
      )
      .all();
    const byEmail = new Map<string, Permission[]>();
    for (const row of rows) {
      if (!isPermission(row.permission)) continue;
      byEmail.set(row.email, [...(byEmail.get(row.email) ?? []), row.permission]);
    }
    return [...byEmail].map(([email, permissions]) => ({ email, permissions }));
  }
}
