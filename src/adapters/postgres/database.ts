import pg from 'pg';
import { StoreUnavailableError } from '../../domain/errors.js';
import { StoreError } from '../../ports/stores.js';
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
}

/**
 * A pool whose connections all use the store's schema. A connection that dies while idle
 * (the server restarted, an operator terminated it) is dropped by the pool and reported to
 * `onError` instead of crashing the process; the next query opens a new one.
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
  });
  pool.on('error', (error) => options.onError?.(error));
  return pool;
}

export interface PostgresStoreDescription {
  /** e.g. "case store"; also the key in `case_read_schema`. */
  readonly what: string;
  readonly migrations: readonly string[];
  /** The command that creates or migrates the store. */
  readonly createHint: string;
}

/** A failure that is not the operator's to fix by hand: the message is safe to print. */
const describe = (error: unknown) => {
  const e = error as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message ?? ''}` : (e.message ?? String(error));
};

/**
 * Creates the schema if absent and applies pending migrations in one transaction, under an
 * advisory lock so two processes migrating at once do not collide.
 */
export async function migrate(pool: pg.Pool, schema: string, store: PostgresStoreDescription): Promise<void> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new StoreError(`${store.what} cannot be reached (${describe(error)})`);
  }
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`case-read:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      'CREATE TABLE IF NOT EXISTS case_read_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)',
    );
    const current = await versionIn(client, store.what);
    if (current > store.migrations.length) {
      throw new StoreError(
        `${store.what} in schema ${schema} is at version ${current}, newer than this service knows (${store.migrations.length})`,
      );
    }
    for (let version = current; version < store.migrations.length; version++) {
      await client.query(store.migrations[version] as string);
    }
    await client.query(
      `INSERT INTO case_read_schema (store, version) VALUES ($1, $2)
       ON CONFLICT (store) DO UPDATE SET version = excluded.version`,
      [store.what, store.migrations.length],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    if (error instanceof StoreError) throw error;
    throw new StoreError(`${store.what} in schema ${schema} cannot be migrated (${describe(error)})`);
  } finally {
    client.release();
  }
}

async function versionIn(client: pg.ClientBase, what: string): Promise<number> {
  const result = await client.query<{ version: number }>(
    'SELECT version FROM case_read_schema WHERE store = $1',
    [what],
  );
  return result.rows[0]?.version ?? 0;
}

/**
 * For `serve`: the store must exist at exactly this code's version. An older one is
 * refused with the command that migrates it; nothing is created or changed.
 */
export async function requireCurrent(
  pool: pg.Pool,
  schema: string,
  store: PostgresStoreDescription,
): Promise<void> {
  let version: number;
  try {
    const exists = await pool.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
      `${schema}.case_read_schema`,
    ]);
    version = exists.rows[0]?.found
      ? ((
          await pool.query<{ version: number }>(
            `SELECT version FROM ${schema}.case_read_schema WHERE store = $1`,
            [store.what],
          )
        ).rows[0]?.version ?? 0)
      : 0;
  } catch (error) {
    throw new StoreError(`${store.what} cannot be reached (${describe(error)})`);
  }
  if (version === store.migrations.length) return;
  if (version === 0) {
    throw new StoreError(
      `${store.what} does not exist in schema ${schema}; create it with: ${store.createHint}`,
    );
  }
  throw new StoreError(
    version < store.migrations.length
      ? `${store.what} in schema ${schema} is at version ${version}, this service needs ${store.migrations.length}; migrate it with: ${store.createHint}`
      : `${store.what} in schema ${schema} is at version ${version}, written by a newer version of this service (${store.migrations.length})`,
  );
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
