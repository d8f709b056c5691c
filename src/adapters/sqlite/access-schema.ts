import { StoreError } from '../../ports/stores.js';
import { accessRows, type ClientRow, type KeyRow, type RevocationRow } from '../shared/access-rows.js';
import type { StoreDescription } from './database.js';

/** The access store's tables in SQLite, and how its rows are encoded. */

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

export class AccessStoreError extends StoreError {
  override readonly name = 'AccessStoreError';
}

export const ACCESS_STORE: StoreDescription = {
  what: 'access store',
  migrations: MIGRATIONS,
  createHint: 'case-read clients add CN --permissions P --access-store sqlite:PATH',
  error: (message) => new AccessStoreError(message),
};

export type SqliteClientRow = ClientRow<string, 0 | 1>;
export type SqliteKeyRow = KeyRow<number>;
export type SqliteRevocationRow = RevocationRow<number>;

/** Lists as comma-separated text, flags as 0/1, times as epoch milliseconds. */
export const ROWS = accessRows<string, 0 | 1, number>({
  list: { read: (text) => text.split(','), write: (items) => items.join(',') },
  flag: { read: (bit) => bit === 1, write: (on) => (on ? 1 : 0) },
  time: { read: (ms) => new Date(ms), write: (date) => date.getTime() },
});

/** Writes made through any access store of this process: a reader checks for changes at once after one. */
export const localWrites = { count: 0 };
