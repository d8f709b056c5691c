import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import { StoreUnavailableError } from '../../domain/errors.js';
import { StoreError } from '../../ports/stores.js';
import { type RecordedSchema, refusalOf, standingOf, usableFromOf } from '../shared/schema-version.js';
import { isCertificateFailure } from '../shared/tls-failures.js';
import { sslOptionsOf } from './tls.js';
import type { PostgresTarget } from './url.js';

/**
 * What every PostgreSQL store shares: the URL form, the pool, the schema, versioned
 * migrations and the mapping of engine failures to a 503.
 *
 * `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?schema=NAME]`: the store's tables live in
 * SCHEMA (default `public`), which is created when the store is. Each store records its
 * version in `case_read_schema` in that schema, so a case, access and audit store can share
 * one schema or have one each.
 */

export interface PoolOptions {
  readonly max?: number;
  /** Per-statement limit, enforced by the server and by the driver. */
  readonly statementTimeoutMs?: number;
  readonly application: string;
  readonly onError?: (error: Error) => void;
  /** Which store, for a refusal of its TLS files (e.g. "case store"). */
  readonly store?: string;
  /** The TLS options, when the caller has read the files already (readPostgresTls); else read here. */
  readonly ssl?: false | ConnectionOptions;
}

/**
 * A pool whose connections all use the store's schema. A connection that dies while idle
 * (the server restarted, an operator terminated it) is dropped by the pool and reported to
 * `onError` instead of crashing the process; the next query opens a new one. The URL's TLS
 * files are read here, once: a file that cannot be used throws {@link StoreError}.
 */
export function createPool(target: PostgresTarget, options: PoolOptions): pg.Pool {
  const timeout = options.statementTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    statement_timeout: timeout,
    query_timeout: timeout + 500,
    application_name: options.application,
    options: `-c search_path=${target.schema}`,
    // Always given, so that PGSSLMODE and the like in the environment are never read instead.
    ssl: options.ssl ?? sslOptionsOf(options.store ?? 'PostgreSQL store', target.tls),
  });
  pool.on('error', (error) => options.onError?.(error));
  return pool;
}

/** What a side connection may add to the pool's settings: TCP keep-alive, never fewer. */
export interface SideConnectionOptions {
  readonly keepAlive?: boolean;
}

/**
 * A connection of its own beside `pool`'s (the access store's LISTEN connection, the archive
 * lock's), made with every setting the pool's connections are made with as they are now: the
 * server, credentials, schema, timeouts and TLS (after a reload, the reloaded files), only its
 * application name its own. The one way this service opens a PostgreSQL connection outside a
 * pool, so no path opens a socket with fewer of the store's settings (decisions §20).
 */
export function sideConnection(
  pool: pg.Pool,
  application: string,
  extra: SideConnectionOptions = {},
): pg.Client {
  const { ssl } = pool.options;
  // createPool always gives ssl (false or the options); a pool without it would let the
  // driver read PGSSLMODE and the like instead.
  if (ssl === undefined) throw new StoreError(`${application}: the store's pool has no TLS settings`);
  return new pg.Client({
    ...pool.options,
    ...extra,
    ssl,
    // The server keeps 63 bytes of it.
    application_name: application.slice(0, 63),
  });
}

export interface PostgresStoreDescription {
  /** e.g. "case store"; also the key in `case_read_schema`. */
  readonly what: string;
  readonly migrations: readonly string[];
  /**
   * The oldest version whose code can still use a store at this version (migrations are
   * expand-only, and the previous release's statements are held to them by a test).
   */
  readonly usableFrom: number;
  /** The command that creates the store. */
  readonly createHint: string;
}

/**
 * A connection's failure as it may be logged or printed: the driver's or server's code and
 * message (which name the host, user and database, never the password), and what a
 * certificate failure means.
 */
export const describeFailure = (error: unknown): string => {
  const e = error as { code?: string; message?: string };
  const text = e.code ? `${e.code}: ${e.message ?? ''}` : (e.message ?? String(error));
  return isCertificateFailure(e.code) ? `the server's certificate does not verify: ${text}` : text;
};

/**
 * How long a migration waits for a table lock before it gives up: an `ALTER TABLE` queued
 * behind a long transaction would hold every read of that table behind it meanwhile.
 */
const MIGRATION_LOCK_TIMEOUT_MS = 3000;

/**
 * Applies a store's pending migrations in one transaction, under an advisory lock so two
 * processes migrating at once take turns (the second finds nothing to do). With `create`,
 * an absent store (and its schema) is created; without it, an absent store is left absent.
 * A store a newer release migrated is left as it is when it says this code can use it, and
 * refused otherwise. Resolves with the version before and after.
 */
export async function migrate(
  pool: pg.Pool,
  schema: string,
  store: PostgresStoreDescription,
  options: { readonly create: boolean } = { create: true },
): Promise<{ before: number; after: number }> {
  const known = store.migrations.length;
  const usableFrom = usableFromOf(store, known);
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new StoreError(`${store.what} cannot be reached (${describeFailure(error)})`);
  }
  try {
    await client.query(`BEGIN; SET LOCAL lock_timeout = ${MIGRATION_LOCK_TIMEOUT_MS}`);
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`case-read:${schema}`]);
    const recorded = await recordedIn(client, schema, store.what);
    const { kind } = standingOf(recorded, known);
    // Refused (the catch rolls back), or left as it is.
    if (kind === 'newer')
      throw new StoreError(refusalOf(`${store.what} in schema ${schema}`, recorded, known));
    if (kind === 'newer-usable' || (kind === 'absent' && !options.create)) {
      await client.query('ROLLBACK');
      return { before: recorded.version, after: recorded.version };
    }
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      'CREATE TABLE IF NOT EXISTS case_read_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL, usable_from INTEGER)',
    );
    // A table made by a release before usable_from was recorded gains the column (the
    // previous release's statements name their columns, so they keep working).
    if (!(await hasUsableFrom(client, schema))) {
      await client.query('ALTER TABLE case_read_schema ADD COLUMN usable_from INTEGER');
    }
    for (let version = recorded.version; version < known; version++) {
      await client.query(store.migrations[version] as string);
    }
    if (recorded.version !== known || recorded.usableFrom !== usableFrom) {
      await client.query(
        `INSERT INTO case_read_schema (store, version, usable_from) VALUES ($1, $2, $3)
         ON CONFLICT (store) DO UPDATE SET version = excluded.version, usable_from = excluded.usable_from`,
        [store.what, known, usableFrom],
      );
    }
    await client.query('COMMIT');
    return { before: recorded.version, after: known };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    if (error instanceof StoreError) throw error;
    throw new StoreError(`${store.what} in schema ${schema} cannot be migrated (${describeFailure(error)})`);
  } finally {
    client.release();
  }
}

async function hasUsableFrom(client: pg.ClientBase, schema: string): Promise<boolean> {
  const result = await client.query(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = $1 AND table_name = 'case_read_schema' AND column_name = 'usable_from'`,
    [schema],
  );
  return result.rowCount === 1;
}

/** The store's record in `case_read_schema`: version 0 when the table or the row is absent. */
async function recordedIn(
  client: pg.ClientBase | pg.Pool,
  schema: string,
  what: string,
): Promise<RecordedSchema> {
  const table = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
    `${schema}.case_read_schema`,
  ]);
  if (!table.rows[0]?.found) return { version: 0 };
  // `*`: the table a release before usable_from made has no such column.
  const result = await client.query<{ version: number; usable_from?: number | null }>(
    `SELECT * FROM ${schema}.case_read_schema WHERE store = $1`,
    [what],
  );
  const row = result.rows[0];
  if (row === undefined) return { version: 0 };
  return row.usable_from == null
    ? { version: row.version }
    : { version: row.version, usableFrom: row.usable_from };
}

/**
 * For `serve`: the store must exist at this code's version, or at a newer one that says this
 * code can use it. An older one is refused with the command that migrates it; nothing is
 * created or changed.
 */
export async function requireCurrent(
  pool: pg.Pool,
  schema: string,
  store: PostgresStoreDescription,
): Promise<void> {
  let recorded: RecordedSchema;
  try {
    recorded = await recordedIn(pool, schema, store.what);
  } catch (error) {
    throw new StoreError(`${store.what} cannot be reached (${describeFailure(error)})`);
  }
  const known = store.migrations.length;
  const standing = standingOf(recorded, known);
  if (standing.kind === 'current' || standing.kind === 'newer-usable') return;
  if (standing.kind === 'absent') {
    throw new StoreError(
      `${store.what} does not exist in schema ${schema}; create it with: ${store.createHint}`,
    );
  }
  throw new StoreError(refusalOf(`${store.what} in schema ${schema}`, recorded, known));
}

/**
 * Runs a query for the request path: any engine failure (connection lost, timeout, server
 * gone) becomes a {@link StoreUnavailableError}, which the service answers with 503. The
 * label kept for the log is the SQLSTATE or the driver's error code, never the text.
 */
export async function onRequestPath<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const e = error as { code?: string; message?: string };
    const label = e.code ?? (/timeout/i.test(e.message ?? '') ? 'timeout' : 'connection');
    throw new StoreUnavailableError(what, label);
  }
}

/**
 * Runs `work` in one transaction on one pooled connection: committed when it resolves,
 * rolled back when it throws; with `statementTimeoutMs` (read once a connection is had),
 * each of its statements is cancelled by the server past that many milliseconds. A connection that failed is destroyed, not returned to the
 * pool. A connection killed between two statements emits 'error' on its client; the
 * listener held here keeps that from ending the process (the next statement rejects).
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  options: { readonly statementTimeoutMs?: () => number | undefined },
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    // A shorter statement timeout for this transaction alone, in the same round trip, read
    // once the connection is had: the time spent waiting for it is spent.
    const timeout = options.statementTimeoutMs?.();
    await client.query(
      timeout === undefined
        ? 'BEGIN'
        : `BEGIN; SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(timeout))}`,
    );
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken ??= error as Error;
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
