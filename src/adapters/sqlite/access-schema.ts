import * as rows from '../shared/access-rows.js';
import { sqliteStore } from './database.js';

/** The access store's tables in SQLite, and how its rows are encoded. */

/** Lists as comma-separated operation ids, flags as 0/1, times as epoch milliseconds. */
const MIGRATIONS: readonly string[] = [
  rows.accessTablesSql({
    list: 'TEXT',
    flag: 'INTEGER NOT NULL DEFAULT 0 CHECK (suspended IN (0, 1))',
    time: 'INTEGER',
    tableEnd: ' WITHOUT ROWID',
  }),
  rows.redactColumnSql({ list: 'TEXT', emptyList: "''" }),
  rows.limitedAccessColumnSql(),
  rows.certificatesSeenTableSql({ time: 'INTEGER', tableEnd: ' WITHOUT ROWID' }),
  rows.certificateRenewalsTableSql({ time: 'INTEGER', tableEnd: ' WITHOUT ROWID' }),
];

export const ACCESS_STORE = sqliteStore('access store', MIGRATIONS, {
  // Version 5 adds the renewal claims, which only EST renewal (new in this release) uses.
  usableFrom: 4,
  createHint: 'case-read clients add CN --permissions P --access-store sqlite:PATH',
});

export type SqliteClientRow = rows.ClientRow<string, 0 | 1>;
export type SqliteKeyRow = rows.KeyRow<number>;
export type SqliteRevocationRow = rows.RevocationRow<number>;

/** Lists as comma-separated text, flags as 0/1, times as epoch milliseconds. */
export const ROWS = rows.accessRows<string, 0 | 1, number>({
  list: { read: (text) => text.split(','), write: (items) => items.join(',') },
  flag: { read: (bit) => bit === 1, write: (on) => (on ? 1 : 0) },
  time: { read: (ms) => new Date(ms), write: (date) => date.getTime() },
});

/** Writes made through any access store of this process: a reader checks for changes at once after one. */
export const localWrites = { count: 0 };
