import { existsSync } from 'node:fs';
import { StoreUnavailableError } from '../../domain/errors.js';
import { StoreError } from '../../ports/stores.js';
import { type RecordedSchema, refusalOf, standingOf, usableFromOf } from '../shared/schema-version.js';
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
  /**
   * The oldest version whose code can still use a store at this version (migrations are
   * expand-only, and the previous release's statements are held to them by a test).
   */
  readonly usableFrom: number;
  /** What to run when the file is missing, e.g. "case-read cases import …". */
  readonly createHint: string;
  /**
   * A new file is made with `auto_vacuum = INCREMENTAL`, so pages freed by deletes can be
   * given back to the disk (SQLite sets this only before the first table; older files keep NONE).
   */
  readonly incrementalVacuum?: boolean;
}

/**
 * A SQLite store, as `what` names it: its migrations and how it is opened. What cannot be
 * opened, or is of another version, is a `StoreError` saying what to do (the store error
 * convention, src/ports/store-errors.ts).
 */
export const sqliteStore = (
  what: string,
  migrations: readonly string[],
  opening: Omit<StoreDescription, 'what' | 'migrations'>,
): StoreDescription => ({ what, migrations, ...opening });

/** How much of a read-only store is mapped; a larger store reads the rest as before. */
const READ_ONLY_MMAP_BYTES = 256 * 1024 * 1024;

const versionOf = (db: SqlDatabase) =>
  db.prepare<[], { user_version: number }>('PRAGMA user_version').get()?.user_version ?? 0;

/**
 * The version in `PRAGMA user_version`, and the usable-from value this release records in
 * `case_read_schema` (absent in a file no release since has migrated).
 */
function recordedIn(db: SqlDatabase, store: StoreDescription): RecordedSchema {
  const version = versionOf(db);
  const table = db
    .prepare<[], { found: number }>(
      "SELECT count(*) AS found FROM sqlite_master WHERE type = 'table' AND name = 'case_read_schema'",
    )
    .get();
  if (!table?.found) return { version };
  const row = db
    .prepare<[string], { usable_from: number }>('SELECT usable_from FROM case_read_schema WHERE store = ?')
    .get(store.what);
  return row === undefined ? { version } : { version, usableFrom: row.usable_from };
}

/**
 * Applies the pending migrations in one transaction that takes the write lock first, so the
 * version is read under it: a second migrator waits, then finds nothing to do. A store a
 * newer release migrated is left as it is when it says this code can use it, refused
 * otherwise.
 */
function migrateOpen(
  db: SqlDatabase,
  path: string,
  store: StoreDescription,
): { before: number; after: number } {
  const known = store.migrations.length;
  const usableFrom = usableFromOf(store, known);
  // Read first without the write lock: a store with nothing to do (every open by `serve`'s
  // note writer and audit log) never waits for another writer. Otherwise read again under it.
  const seen = recordedIn(db, store);
  const seenStanding = standingOf(seen, known).kind;
  if (seenStanding === 'newer-usable' || (seenStanding === 'current' && seen.usableFrom === usableFrom)) {
    return { before: seen.version, after: seen.version };
  }
  return transaction(
    db,
    () => {
      const recorded = recordedIn(db, store);
      const standing = standingOf(recorded, known);
      if (standing.kind === 'newer')
        throw new StoreError(refusalOf(`${store.what} ${path}`, recorded, known));
      if (standing.kind === 'newer-usable') return { before: recorded.version, after: recorded.version };
      for (let version = recorded.version; version < known; version++) {
        db.exec(store.migrations[version] as string);
        db.exec(`PRAGMA user_version = ${version + 1}`);
      }
      if (recorded.usableFrom !== usableFrom) {
        db.exec(
          'CREATE TABLE IF NOT EXISTS case_read_schema (store TEXT PRIMARY KEY, usable_from INTEGER NOT NULL)',
        );
        db.prepare<[string, number]>(
          'INSERT INTO case_read_schema (store, usable_from) VALUES (?, ?) ON CONFLICT (store) DO UPDATE SET usable_from = excluded.usable_from',
        ).run(store.what, usableFrom);
      }
      return { before: recorded.version, after: known };
    },
    'immediate',
  );
}

const messageOf = (error: unknown) => (error as Error).message.split('\n')[0];

/**
 * Opens the file, read-only or for writing; a failure becomes the store's own error, told why
 * in SQLite's first line (and, read-only, what creates the store).
 */
function openOrExplain(
  driver: SqliteDriver,
  path: string,
  store: StoreDescription,
  readonly: boolean,
): SqlDatabase {
  try {
    return driver.open(path, { readonly });
  } catch (error) {
    const why = messageOf(error) ?? 'error';
    throw new StoreError(
      readonly
        ? `${store.what} ${path} cannot be opened (${why}); create it with: ${store.createHint}`
        : `${store.what} ${path} cannot be opened for writing (${why})`,
    );
  }
}

export function openReadOnlyStore(
  path: string,
  store: StoreDescription,
  driver: SqliteDriver = sqliteDriver(),
): SqlDatabase {
  const db = openOrExplain(driver, path, store, true);
  // Read through a memory map: a row longer than about 1 KiB (a case's stored document, in a
  // WITHOUT ROWID table) has overflow pages, which SQLite reads past its page cache, a pread
  // per page on every read; mapped, they are copied from memory. The file is only ever read
  // here, and SQLite remaps when another process's writes grow it.
  db.exec(`PRAGMA mmap_size = ${READ_ONLY_MMAP_BYTES}`);
  const recorded = recordedIn(db, store);
  const standing = standingOf(recorded, store.migrations.length);
  if (standing.kind === 'current' || standing.kind === 'newer-usable') return db;
  db.close();
  throw new StoreError(
    standing.kind === 'absent'
      ? `${store.what} ${path} holds no ${store.what}; create it with: ${store.createHint}`
      : refusalOf(`${store.what} ${path}`, recorded, store.migrations.length),
  );
}

export function openWritableStore(
  path: string,
  store: StoreDescription,
  driver: SqliteDriver = sqliteDriver(),
): SqlDatabase {
  const db = openOrExplain(driver, path, store, false);
  try {
    if (store.incrementalVacuum && versionOf(db) === 0) db.exec('PRAGMA auto_vacuum = INCREMENTAL');
    db.exec('PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL');
    migrateOpen(db, path, store);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * For `stores migrate`: applies the pending migrations to an existing store and says its
 * version before and after. A missing file, or one that holds no store yet, is left as it is
 * (version 0): creating a store is its own command's work.
 */
export function migrateFile(
  path: string,
  store: StoreDescription,
  driver: SqliteDriver = sqliteDriver(),
): { before: number; after: number } {
  if (!existsSync(path)) return { before: 0, after: 0 };
  const db = openOrExplain(driver, path, store, false);
  try {
    if (versionOf(db) === 0) return { before: 0, after: 0 };
    db.exec('PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON');
    return migrateOpen(db, path, store);
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError(
      `${store.what} ${path} cannot be migrated (${messageOf(error)}); nothing was changed`,
    );
  } finally {
    db.close();
  }
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
