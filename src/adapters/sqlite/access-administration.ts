import type { ApiKeyRecord, Client } from '../../domain/access/model.js';
import type { Permission } from '../../domain/access/permissions.js';
import type {
  AccessAdministration,
  CertificateRevocation,
  CertificateSeen,
  UserGrant,
} from '../../ports/access-directory.js';
import { type CertificateSeenRow, clientWritesSql, grantsOf, KEY_COLUMNS } from '../shared/access-rows.js';
import { SqliteAccessDirectory } from './access-directory.js';
import {
  ACCESS_STORE,
  localWrites,
  ROWS,
  type SqliteClientRow,
  type SqliteKeyRow,
  type SqliteRevocationRow,
} from './access-schema.js';
import { openWritableStore, transaction } from './database.js';
import type { SqlDatabase, SqliteDriver } from './driver.js';

const CLIENT_WRITES = clientWritesSql(() => '?');

/**
 * The operator's side of the SQLite access store: what the CLI writes (clients, keys,
 * revocations, grants), besides everything the request path reads. Every write counts in
 * `localWrites`, so a reader in this process looks for the change at once.
 */
export class SqliteAccessAdministration extends SqliteAccessDirectory implements AccessAdministration {
  /** Opens (creating and migrating if needed) a store for the operator's changes. */
  static open(path: string, driver?: SqliteDriver): SqliteAccessAdministration {
    return new SqliteAccessAdministration(openWritableStore(path, ACCESS_STORE, driver));
  }

  private write<T>(change: () => T): T {
    localWrites.count++;
    return change();
  }

  async saveClient(client: Client): Promise<void> {
    this.write(() => this.db.prepare(CLIENT_WRITES.save).run(...ROWS.clientValues(client)));
  }

  async addClient(client: Client): Promise<boolean> {
    return this.write(() => this.db.prepare(CLIENT_WRITES.add).run(...ROWS.clientValues(client)).changes > 0);
  }

  /**
   * Read, changed and written in one transaction that takes the write lock before it reads
   * (`BEGIN IMMEDIATE`): another connection's write (a suspend, another update, in this
   * process or another) waits for it, up to the busy timeout, and one committed before it is
   * what it reads.
   */
  async updateClient(id: string, change: (held: Client) => Client): Promise<Client | undefined> {
    return this.write(() =>
      transaction(
        this.db,
        () => {
          const row = this.reads.client.get(id);
          if (row === undefined) return undefined;
          const changed = { ...change(ROWS.toClient(row)), id };
          this.db.prepare(CLIENT_WRITES.update).run(...ROWS.clientUpdateValues(changed));
          return changed;
        },
        'immediate',
      ),
    );
  }

  async removeClient(id: string): Promise<boolean> {
    return this.write(() =>
      transaction(this.db, () => {
        this.db.prepare('DELETE FROM certificate_revocations WHERE client_id = ?').run(id);
        return this.db.prepare('DELETE FROM clients WHERE id = ?').run(id).changes > 0;
      }),
    );
  }

  async listClients(): Promise<Client[]> {
    return this.db.prepare<[], SqliteClientRow>('SELECT * FROM clients ORDER BY id').all().map(ROWS.toClient);
  }

  async setSuspended(id: string, suspended: boolean): Promise<boolean> {
    return this.write(
      () =>
        this.db.prepare('UPDATE clients SET suspended = ? WHERE id = ?').run(suspended ? 1 : 0, id).changes >
        0,
    );
  }

  async addApiKey(key: ApiKeyRecord): Promise<void> {
    if (this.reads.client.get(key.clientId) === undefined) throw new Error(`no client ${key.clientId}`);
    if (this.reads.key.get(key.id) !== undefined) throw new Error(`key ${key.id} already exists`);
    this.write(() =>
      this.db
        .prepare(
          `INSERT INTO api_keys (${KEY_COLUMNS.join(', ')}) VALUES (${KEY_COLUMNS.map(() => '?').join(', ')})`,
        )
        .run(...ROWS.keyValues(key)),
    );
  }

  async listApiKeys(clientId: string): Promise<ApiKeyRecord[]> {
    return this.db
      .prepare<[string], SqliteKeyRow>('SELECT * FROM api_keys WHERE client_id = ? ORDER BY created_at, id')
      .all(clientId)
      .map(ROWS.toKey);
  }

  async revokeApiKey(id: string, at: Date): Promise<boolean> {
    if (this.reads.key.get(id) === undefined) return false;
    this.write(() =>
      this.db
        .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
        .run(at.getTime(), id),
    );
    return true;
  }

  async revokeCertificate(revocation: CertificateRevocation): Promise<void> {
    this.write(() =>
      this.db
        .prepare(
          'INSERT OR IGNORE INTO certificate_revocations (serial_number, client_id, revoked_at) VALUES (?, ?, ?)',
        )
        .run(revocation.serialNumber, revocation.clientId ?? '', revocation.revokedAt.getTime()),
    );
  }

  async listCertificatesSeen(): Promise<CertificateSeen[]> {
    return this.db
      .prepare<[], CertificateSeenRow<number>>('SELECT * FROM certificates_seen ORDER BY client_id')
      .all()
      .map(ROWS.toCertificateSeen);
  }

  /** The operator's connection writes as it is. */
  protected override noteWriter(): SqlDatabase {
    return this.db;
  }

  async listCertificateRevocations(): Promise<CertificateRevocation[]> {
    return this.db
      .prepare<[], SqliteRevocationRow>(
        'SELECT * FROM certificate_revocations ORDER BY revoked_at, serial_number',
      )
      .all()
      .map(ROWS.toRevocation);
  }

  async addGrant(email: string, permissions: readonly Permission[]): Promise<void> {
    const insert = this.db.prepare('INSERT OR IGNORE INTO user_grants (email, permission) VALUES (?, ?)');
    this.write(() =>
      transaction(this.db, () => {
        for (const p of permissions) insert.run(email.toLowerCase(), p);
      }),
    );
  }

  async removeGrant(email: string, permissions: readonly Permission[]): Promise<void> {
    const remove = this.db.prepare('DELETE FROM user_grants WHERE email = ? AND permission = ?');
    this.write(() =>
      transaction(this.db, () => {
        for (const p of permissions) remove.run(email.toLowerCase(), p);
      }),
    );
  }

  async listGrants(): Promise<UserGrant[]> {
    return grantsOf(
      this.db
        .prepare<[], { email: string; permission: string }>(
          'SELECT email, permission FROM user_grants ORDER BY email, permission',
        )
        .all(),
    );
  }
}
