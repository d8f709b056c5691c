import * as rows from '../shared/access-rows.js';
import type { PostgresStoreDescription } from './database.js';

/** The access store's tables in PostgreSQL (with the triggers that announce each change), and how its rows are encoded. */

/** Every change to the access tables notifies this channel, with the schema as payload. */
export const ACCESS_CHANNEL = 'case_read_access';

export const ACCESS_STORE: PostgresStoreDescription = {
  what: 'access store',
  createHint: 'case-read clients add CN --permissions P --access-store postgres://…',
  // Version 5 adds the renewal claims, which only EST renewal (new in this release) uses.
  usableFrom: 4,
  migrations: [
    `${rows.accessTablesSql({
      list: 'TEXT[]',
      flag: 'BOOLEAN NOT NULL DEFAULT false',
      time: 'TIMESTAMPTZ',
      tableEnd: '',
    })}
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
    rows.redactColumnSql({ list: 'TEXT[]', emptyList: "'{}'" }),
    rows.limitedAccessColumnSql(),
    // Not announced: what a client presented is no input to any decision, so no cache drops it.
    rows.certificatesSeenTableSql({ time: 'TIMESTAMPTZ', tableEnd: '' }),
    // Not announced either: no cached answer depends on a renewal claim.
    rows.certificateRenewalsTableSql({ time: 'TIMESTAMPTZ', tableEnd: '' }),
  ],
};

export type PostgresClientRow = rows.ClientRow<string[], boolean>;
export type PostgresKeyRow = rows.KeyRow<Date>;
export type PostgresRevocationRow = rows.RevocationRow<Date>;

/** The driver's own types: TEXT[] as arrays, BOOLEAN as booleans, TIMESTAMPTZ as Dates. */
export const ROWS = rows.accessRows<string[], boolean, Date>({
  list: { read: (items) => items, write: (items) => [...items] },
  flag: { read: (on) => on, write: (on) => on },
  time: { read: (date) => date, write: (date) => date },
});

export const WHAT = 'access store';
