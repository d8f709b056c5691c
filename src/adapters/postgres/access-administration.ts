import type { ApiKeyRecord, Client } from '../../domain/access/model.js';
import type { Permission } from '../../domain/access/permissions.js';
import type {
  AccessAdministration,
  CertificateRevocation,
  CertificateSeen,
  UserGrant,
} from '../../ports/access-directory.js';
import { type CertificateSeenRow, clientWritesSql, grantsOf, KEY_COLUMNS } from '../shared/access-rows.js';
import { PostgresAccessDirectory } from './access-directory.js';
import {
  type PostgresClientRow,
  type PostgresKeyRow,
  type PostgresRevocationRow,
  ROWS,
} from './access-schema.js';
import { inTransaction } from './database.js';

const CLIENT_WRITES = clientWritesSql((n) => `$${n}`);

/**
 * The operator's side of the PostgreSQL access store: what the CLI writes, besides what the
 * request path reads. Each change fires the tables' triggers, which tell every instance to
 * drop its cache.
 */
export class PostgresAccessAdministration extends PostgresAccessDirectory implements AccessAdministration {
  async saveClient(client: Client): Promise<void> {
    await this.pool.query(CLIENT_WRITES.save, ROWS.clientValues(client));
  }

  async addClient(client: Client): Promise<boolean> {
    const { rowCount } = await this.pool.query(CLIENT_WRITES.add, ROWS.clientValues(client));
    return (rowCount ?? 0) > 0;
  }

  /**
   * Read and written in one transaction, the row locked as it is read (`SELECT … FOR
   * UPDATE`): another writer of it (a suspend, another update, from any instance) waits for
   * this commit, then applies its change to what this one wrote; one that committed first is
   * what is read. The UPDATE fires the clients trigger, so every instance drops its cache at
   * the commit.
   */
  async updateClient(id: string, change: (held: Client) => Client): Promise<Client | undefined> {
    return inTransaction(this.pool, {}, async (tx) => {
      const { rows } = await tx.query<PostgresClientRow>('SELECT * FROM clients WHERE id = $1 FOR UPDATE', [
        id,
      ]);
      const row = rows[0];
      if (row === undefined) return undefined;
      const changed = { ...change(ROWS.toClient(row)), id };
      await tx.query(CLIENT_WRITES.update, ROWS.clientUpdateValues(changed));
      return changed;
    });
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
    return (await this.pool.query<PostgresClientRow>('SELECT * FROM clients ORDER BY id')).rows.map(
      ROWS.toClient,
    );
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
      `INSERT INTO api_keys (${KEY_COLUMNS.join(', ')})
       VALUES (${KEY_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (id) DO NOTHING`,
      ROWS.keyValues(key),
    );
    if (rowCount === 0) throw new Error(`key ${key.id} already exists`);
  }

  async listApiKeys(clientId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<PostgresKeyRow>(
      'SELECT * FROM api_keys WHERE client_id = $1 ORDER BY created_at, id',
      [clientId],
    );
    return rows.map(ROWS.toKey);
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
    const { rows } = await this.pool.query<PostgresRevocationRow>(
      'SELECT * FROM certificate_revocations ORDER BY revoked_at, serial_number',
    );
    return rows.map(ROWS.toRevocation);
  }

  async listCertificatesSeen(): Promise<CertificateSeen[]> {
    const { rows } = await this.pool.query<CertificateSeenRow<Date>>(
      'SELECT * FROM certificates_seen ORDER BY client_id',
    );
    return rows.map(ROWS.toCertificateSeen);
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
    const { rows } = await this.pool.query<{ email: string; permission: string }>(
      'SELECT email, permission FROM user_grants ORDER BY email, permission',
    );
    return grantsOf(rows);
  }
}
