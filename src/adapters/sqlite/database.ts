import { StoreUnavailableError } from '../../domain/errors.js';
import { type SqlDatabase, type SqliteDriver, sqliteDriver, sqliteErrorCode } from './driver.js';

/**
 * Opening SQLite stores, shared by every store in this adapter: a read-only connection for
 * the service (it must exist and be at the schema version this code knows), or a writable
 * one for the CLI (created if needed, WAL, foreign keys, pending migrations applied in one
 * transaction, recorded in `PRAGMA user_version`). Each runs on this runtime's driver
 * unless one is given.
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

/** How much of a read-only store is mapped; a larger store reads the rest as before. */
const READ_ONLY_MMAP_BYTES = 256 * 1024 * 1024;

const versionOf = (db: SqlDatabase) =>
  db.prepare<[], { user_version: number }>('PRAGMA user_version').get()?.user_version ?? 0;

const messageOf = (error: unknown) => (error as Error).message.split('\n')[0];

/** Opens the file; a failure becomes the store's own error, told why in SQLite's first line. */
function openOrExplain(
  driver: SqliteDriver,
  path: string,
  readonly: boolean,
  explain: (why: string) => Error,
): SqlDatabase {
  try {
    return driver.open(path, { readonly });
  } catch (error) {
    throw explain(messageOf(error) ?? 'error');
  }
}

export function openReadOnlyStore(
  path: string,
  store: StoreDescription,
  driver: SqliteDriver = sqliteDriver(),
): SqlDatabase {
  const db = openOrExplain(driver, path, true, (why) =>
    store.error(`${store.what} ${path} cannot be opened (${why}); create it with: ${store.createHint}`),
  );
  // Read through a memory map: a row longer than about 1 KiB (a case's stored document, in a
  // WITHOUT ROWID table) has overflow pages, which SQLite reads past its page cache, a pread
  // per page on every read; mapped, they are copied from memory. The file is only ever read
  // here, and SQLite remaps when another process's writes grow it.
  db.exec(`PRAGMA mmap_size = ${READ_ONLY_MMAP_BYTES}`);
  const version = versionOf(db);
  const needs = store.migrations.length;
  if (version === needs) return db;
  db.close();
  const advice =
    version < needs ? `run ${store.createHint} against it to migrate` : 'it was written by a newer version';
  throw store.error(
    `${store.what} ${path} is at schema version ${version}, this service needs ${needs}; ${advice}`,
  );
}

export function openWritableStore(
  path: string,
  store: StoreDescription,
  driver: SqliteDriver = sqliteDriver(),
): SqlDatabase {
  const db = openOrExplain(driver, path, false, (why) =>
    store.error(`${store.what} ${path} cannot be opened for writing (${why})`),
  );
  db.exec('PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL');
  const current = versionOf(db);
  if (current > store.migrations.length) {
    db.close();
    throw store.error(
      `${store.what} ${path} is at schema version ${current}, newer than this service knows (${store.migrations.length})`,
    );
  }
  transaction(db, () => {
    for (let version = current; version < store.migrations.length; version++) {
      db.exec(store.migrations[version] as string);
      db.exec(`PRAGMA user_version = ${version + 1}`);
    }
  });
  return db;
}

/**
 * Runs `work` in one transaction: committed when it returns, rolled back when it throws.
 * `immediate` takes the write lock at the start, before anything is read.
 */
export function transaction<T>(
  db: SqlDatabase,
  work: () => T,
  mode: 'deferred' | 'immediate' = 'deferred',
): T {
  db.exec(mode === 'immediate' ? 'BEGIN IMMEDIATE' : 'BEGIN');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
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
    throw new StoreUnavailableError(what, sqliteErrorCode(error));
  }
}
