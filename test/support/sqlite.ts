import { SqliteCaseRepository, SqliteCaseWriter } from '../../src/adapters/sqlite/case-store.js';
import { type SqlDatabase, sqliteDriver } from '../../src/adapters/sqlite/driver.js';
import type { CaseRecord } from '../../src/domain/types.js';

/**
 * A connection of this runtime's SQLite driver (better-sqlite3 on Node, bun:sqlite on Bun,
 * node:sqlite on Deno), for tests that look into or tamper with a store's file.
 */
export const openSqlite = (path: string, options: { readonly?: boolean } = {}): SqlDatabase =>
  sqliteDriver().open(path, { readonly: options.readonly ?? false });

/** The value of a one-value PRAGMA, e.g. `pragma(db, 'user_version')`. */
export const pragma = (db: SqlDatabase, name: string): unknown => {
  const row = db.prepare(`PRAGMA ${name}`).get();
  return row === undefined ? undefined : Object.values(row)[0];
};

/** Runs SQL on the file at `path` through a connection of its own. */
export function execOn(path: string, sql: string): void {
  const db = openSqlite(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

/** A SQLite case store at `path` holding `records`, opened read-only as `serve` opens it. */
export function sqliteCaseStoreOf(path: string, records: readonly CaseRecord[]): SqliteCaseRepository {
  const writer = SqliteCaseWriter.open(path);
  writer.write(records);
  writer.close();
  return SqliteCaseRepository.openReadOnly(path);
}
