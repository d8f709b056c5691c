import Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../domain/errors.js';

/**
 * Opening SQLite stores, shared by every store in this adapter: a read-only connection for
 * the service (it must exist and be at the schema version this code knows), or a writable
 * one for the CLI (created if needed, WAL, foreign keys, pending migrations applied in one
 * transaction, recorded in `PRAGMA user_version`).
 */
export interface StoreDescription {
  /** e.g. "case store" */
  readonly what: string;
  readonly migrations: readonly string[];
  /** What to run when the file is missing, e.g. "case-read cases import …". */
  readonly createHint: string;
  /** Builds the store's own error type. */
  readonly error: (message: string) => Error;
}

const versionOf = (db: Database.Database) => db.pragma('user_version', { simple: true }) as number;

export function openReadOnlyStore(path: string, store: StoreDescription): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw store.error(
      `${store.what} ${path} cannot be opened (${(error as Error).message}); create it with: ${store.createHint}`,
    );
  }
  const version = versionOf(db);
  if (version !== store.migrations.length) {
    db.close();
    throw store.error(
      `${store.what} ${path} is at schema version ${version}, this service needs ${store.migrations.length}; ${version < store.migrations.length ? `run ${store.createHint} against it to migrate` : 'it was written by a newer version'}`,
    );
  }
  return db;
}

export function openWritableStore(path: string, store: StoreDescription): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (error) {
    throw store.error(`${store.what} ${path} cannot be opened for writing (${(error as Error).message})`);
  }
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  const current = versionOf(db);
  if (current > store.migrations.length) {
    db.close();
    throw store.error(
      `${store.what} ${path} is at schema version ${current}, newer than this service knows (${store.migrations.length})`,
    );
  }
  db.transaction(() => {
    for (let version = current; version < store.migrations.length; version++) {
      db.exec(store.migrations[version] as string);
      db.pragma(`user_version = ${version + 1}`);
    }
  })();
  return db;
}

/**
 * Runs a read for the request path: an engine failure (I/O error, a locked or corrupt
 * file) becomes a {@link StoreUnavailableError}, answered with 503; only SQLite's error
 * code is kept for the log.
 */
export function reading<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new StoreUnavailableError(what, (error as { code?: string }).code ?? 'error');
  }
}
