import { createRequire } from 'node:module';
import { detectRuntime, type RuntimeName } from '../shared/runtime.js';

/**
 * The seam between the SQLite stores and the binding that runs SQLite in this runtime:
 * better-sqlite3 on Node, `bun:sqlite` on Bun, `node:sqlite` on Deno (and on a Node that
 * has it, when better-sqlite3 cannot load). The stores use only what is declared here, so
 * they read and write the same bytes on each; the contract suites run on every driver.
 */
export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite' | 'bun:sqlite';

/** A prepared statement. A missing row is `undefined` on every driver (Bun's own is `null`). */
export interface SqlStatement<P extends readonly unknown[] = unknown[], R = Record<string, unknown>> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  run(...params: P): { changes: number };
}

export interface SqlDatabase {
  readonly driver: SqliteDriverName;
  prepare<P extends readonly unknown[] = unknown[], R = Record<string, unknown>>(
    sql: string,
  ): SqlStatement<P, R>;
  /** Runs one or more statements, discarding any rows. */
  exec(sql: string): void;
  readonly inTransaction: boolean;
  readonly isOpen: boolean;
  close(): void;
}

export interface OpenOptions {
  /** Read-only: the file must exist and is never changed. Otherwise it is created if missing. */
  readonly readonly: boolean;
}

export interface SqliteDriver {
  readonly name: SqliteDriverName;
  open(path: string, options: OpenOptions): SqlDatabase;
}

/** How long a statement waits for another process's lock before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

const require = createRequire(import.meta.url);

/** SQLite's primary result codes by number, for drivers that report only the number. */
const RESULT_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  12: 'SQLITE_NOTFOUND',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  16: 'SQLITE_EMPTY',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  22: 'SQLITE_NOLFS',
  23: 'SQLITE_AUTH',
  24: 'SQLITE_FORMAT',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
};

/** SQLite's own text for a result code (`sqlite3_errstr`), for errors that carry only that. */
const RESULT_TEXTS: readonly (readonly [string, string])[] = [
  ['attempt to write a readonly database', 'SQLITE_READONLY'],
  ['database is locked', 'SQLITE_BUSY'],
  ['database table is locked', 'SQLITE_LOCKED'],
  ['disk I/O error', 'SQLITE_IOERR'],
  ['database disk image is malformed', 'SQLITE_CORRUPT'],
  ['file is not a database', 'SQLITE_NOTADB'],
  ['unable to open database file', 'SQLITE_CANTOPEN'],
  ['database or disk is full', 'SQLITE_FULL'],
  ['constraint failed', 'SQLITE_CONSTRAINT'],
];

/**
 * SQLite's error code name (`SQLITE_BUSY`, …) of an error from any driver, or `error`:
 * better-sqlite3 and Bun name it in `code`; `node:sqlite` gives the number in `errcode`,
 * or on Deno sometimes only SQLite's message.
 */
export function sqliteErrorCode(error: unknown): string {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && e.code.startsWith('SQLITE_')) return e.code;
  if (typeof e?.errcode === 'number') return RESULT_CODES[e.errcode & 0xff] ?? 'error';
  if (e?.code === 'ERR_SQLITE_ERROR' && typeof e.message === 'string') {
    const message = e.message;
    const known = RESULT_TEXTS.find(([text]) => message.includes(text));
    if (known) return known[1];
    if (/^(SQL logic error|no such |near ")/.test(message)) return 'SQLITE_ERROR';
  }
  return 'error';
}

// ---------------------------------------------------------------------------------------
// What the three bindings have in common, and one wrapper over it.

interface NativeStatement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number | bigint };
}
interface NativeDatabase {
  prepare(sql: string): NativeStatement;
  exec(sql: string): void;
  close(): void;
}

/**
 * A driver's connection as a {@link SqlDatabase}. Statements are adapted (a missing row is
 * `undefined`, `changes` a number) unless the binding's own already keep that shape.
 */
function wrap(
  driver: SqliteDriverName,
  db: NativeDatabase,
  state: { inTransaction(): boolean; isOpen(): boolean },
  statementsFit = false,
): SqlDatabase {
  return {
    driver,
    prepare<P extends readonly unknown[], R>(sql: string): SqlStatement<P, R> {
      const statement = db.prepare(sql);
      if (statementsFit) return statement as unknown as SqlStatement<P, R>;
      return {
        get: (...params) => (statement.get(...params) ?? undefined) as R | undefined,
        all: (...params) => statement.all(...params) as R[],
        run: (...params) => ({ changes: Number(statement.run(...params).changes) }),
      };
    },
    exec: (sql) => db.exec(sql),
    get inTransaction() {
      return state.inTransaction();
    },
    get isOpen() {
      return state.isOpen();
    },
    close: () => db.close(),
  };
}

// ---------------------------------------------------------------------------------------
// better-sqlite3 (Node)

interface BetterDatabase extends NativeDatabase {
  readonly inTransaction: boolean;
  readonly open: boolean;
}
type BetterConstructor = new (
  path: string,
  options: { readonly?: boolean; fileMustExist?: boolean; timeout?: number },
) => BetterDatabase;

function betterSqlite3(): SqliteDriver {
  const Database = require('better-sqlite3') as BetterConstructor;
  // The native addon is loaded by the first open: fail here, not at the first store.
  new Database(':memory:', {}).close();
  return {
    name: 'better-sqlite3',
    open(path, { readonly }) {
      const db = new Database(path, { readonly, fileMustExist: readonly, timeout: BUSY_TIMEOUT_MS });
      // Its statements already answer undefined for no row and a numeric `changes`.
      return wrap(
        'better-sqlite3',
        db,
        { inTransaction: () => db.inTransaction, isOpen: () => db.open },
        true,
      );
    },
  };
}

// ---------------------------------------------------------------------------------------
// node:sqlite (Deno; Node where present)

interface NodeSqliteDatabase extends NativeDatabase {
  readonly isTransaction: boolean;
  readonly isOpen: boolean;
}
type NodeSqliteConstructor = new (
  path: string,
  options: { readOnly?: boolean; timeout?: number },
) => NodeSqliteDatabase;

function loadNodeSqlite(): NodeSqliteConstructor {
  const { DatabaseSync } = require('node:sqlite') as { DatabaseSync: NodeSqliteConstructor };
  // The stores need to know whether a transaction is open; early releases could not say.
  if (!('isTransaction' in DatabaseSync.prototype)) {
    throw new Error('this node:sqlite has no isTransaction');
  }
  return DatabaseSync;
}

function nodeSqlite(): SqliteDriver {
  const DatabaseSync = loadNodeSqlite();
  return {
    name: 'node:sqlite',
    open(path, { readonly }) {
      // node:sqlite creates a missing file unless it is opened read-only, which fails on one.
      const db = new DatabaseSync(path, { readOnly: readonly, timeout: BUSY_TIMEOUT_MS });
      return wrap('node:sqlite', db, { inTransaction: () => db.isTransaction, isOpen: () => db.isOpen });
    },
  };
}

// ---------------------------------------------------------------------------------------
// bun:sqlite (Bun)

interface BunDatabase extends NativeDatabase {
  readonly inTransaction: boolean;
}
type BunConstructor = new (
  path: string,
  options: { readonly?: boolean; readwrite?: boolean; create?: boolean; strict?: boolean },
) => BunDatabase;

function bunSqlite(): SqliteDriver {
  const { Database } = require('bun:sqlite') as { Database: BunConstructor };
  return {
    name: 'bun:sqlite',
    open(path, { readonly }) {
      const db = new Database(
        path,
        readonly ? { readonly: true, strict: true } : { readwrite: true, create: true, strict: true },
      );
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // Bun's connection cannot say whether it is open: closing through the wrapper is tracked.
      let open = true;
      const tracked: NativeDatabase = {
        prepare: (sql) => db.prepare(sql),
        exec: (sql) => db.exec(sql),
        close: () => {
          open = false;
          db.close();
        },
      };
      // Its `get` answers null for no row; the wrapper makes that undefined.
      return wrap('bun:sqlite', tracked, { inTransaction: () => db.inTransaction, isOpen: () => open });
    },
  };
}

// ---------------------------------------------------------------------------------------

const LOADERS: Record<SqliteDriverName, () => SqliteDriver> = {
  'better-sqlite3': betterSqlite3,
  'node:sqlite': nodeSqlite,
  'bun:sqlite': bunSqlite,
};

/** The drivers to try on each runtime, best first. */
const PREFERENCE: Record<RuntimeName, readonly SqliteDriverName[]> = {
  node: ['better-sqlite3', 'node:sqlite'],
  bun: ['bun:sqlite'],
  deno: ['node:sqlite'],
};

/** The drivers to try in this runtime, best first. */
export const driverPreference = (runtime: RuntimeName = detectRuntime().name): readonly SqliteDriverName[] =>
  PREFERENCE[runtime];

const loaded = new Map<SqliteDriverName, SqliteDriver>();

/** Loads a named driver; throws when this runtime cannot load it. */
export function loadSqliteDriver(name: SqliteDriverName): SqliteDriver {
  let driver = loaded.get(name);
  if (driver === undefined) {
    driver = LOADERS[name]();
    loaded.set(name, driver);
  }
  return driver;
}

let chosen: SqliteDriver | undefined;

/**
 * This runtime's SQLite driver: the first of {@link driverPreference} that loads. Loaded
 * on first use, so a service with no SQLite store never loads one.
 */
export function sqliteDriver(): SqliteDriver {
  if (chosen !== undefined) return chosen;
  const failures: string[] = [];
  for (const name of driverPreference()) {
    try {
      chosen = loadSqliteDriver(name);
      return chosen;
    } catch (error) {
      failures.push(`${name}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  throw new Error(`no SQLite driver loads in this runtime (${failures.join('; ')})`);
}
