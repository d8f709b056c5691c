import { accessRows, type ClientRow, type KeyRow, type RevocationRow } from '../shared/access-rows.js';
import type { PostgresStoreDescription } from './database.js';

/** The access store's tables in PostgreSQL (with the triggers that announce each change), and how its rows are encoded. */

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

export type PostgresClientRow = ClientRow<string[], boolean>;
export type PostgresKeyRow = KeyRow<Date>;
export type PostgresRevocationRow = RevocationRow<Date>;

/** The driver's own types: TEXT[] as arrays, BOOLEAN as booleans, TIMESTAMPTZ as Dates. */
export const ROWS = accessRows<string[], boolean, Date>({
  list: { read: (items) => items, write: (items) => [...items] },
  flag: { read: (on) => on, write: (on) => on },
  time: { read: (date) => date, write: (date) => date },
});

export const WHAT = 'access store';
