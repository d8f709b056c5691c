import type pg from 'pg';
import type { WitnessedCheckpoint, WitnessedHead, WitnessState } from '../../ports/witness-state.js';
import { checkpointOf, rootText, type WitnessRow, witnessLogsSql } from '../shared/witness-rows.js';
import { createPool, migrate, type PostgresStoreDescription } from './database.js';
import { displayPostgresUrl, targetOf } from './url.js';

/**
 * A witness's record in PostgreSQL (`WITNESS_STORE=postgres://…[?schema=NAME]`): a row per
 * log, by origin, in a table of its own (created with its schema when missing). Several
 * witness processes may share it: each advance is one conditional statement, an UPDATE that
 * matches only the size and root it was checked against, or for a log seen for the first time
 * an INSERT … ON CONFLICT DO NOTHING, so of two advances from the same record the server lets
 * exactly one through (the second waits for the first's row lock, then finds the row changed).
 * A commit is durable before it returns (the server's `synchronous_commit`, on by default).
 */

/** The witness state's schema, version by version. The root is kept in base64, as the checkpoint writes it. */
const WITNESS_STATE: PostgresStoreDescription = {
  what: 'witness state',
  migrations: [witnessLogsSql({ size: 'BIGINT', updated: 'TIMESTAMPTZ NOT NULL DEFAULT now()' })],
  usableFrom: 1,
  createHint: 'case-read witness serve (it creates the table)',
};

/** A row as this driver reads it. */
interface Row extends WitnessRow {
  readonly size: string;
}

class PostgresWitnessState implements WitnessState {
  constructor(
    private readonly pool: pg.Pool,
    readonly description: string,
  ) {}

  async latest(origin: string): Promise<WitnessedCheckpoint | undefined> {
    const result = await this.pool.query<Row>(
      'SELECT size::text AS size, root, note FROM witness_logs WHERE origin = $1',
      [origin],
    );
    return checkpointOf(result.rows[0]);
  }

  async advance(
    origin: string,
    expected: WitnessedHead,
    next: WitnessedCheckpoint,
  ): Promise<true | WitnessedCheckpoint | undefined> {
    const root = rootText(next.root);
    const result =
      expected === undefined
        ? await this.pool.query(
            `INSERT INTO witness_logs (origin, size, root, note) VALUES ($1, $2, $3, $4)
             ON CONFLICT (origin) DO NOTHING`,
            [origin, next.size, root, next.note],
          )
        : await this.pool.query(
            `UPDATE witness_logs SET size = $2, root = $3, note = $4, updated = now()
             WHERE origin = $1 AND size = $5 AND root = $6 AND size <= $2`,
            [origin, next.size, root, next.note, expected.size, rootText(expected.root)],
          );
    return result.rowCount === 1 ? true : this.latest(origin);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * Opens the witness state at the PostgreSQL URL `url` (which must pass the store URL's
 * checks), creating its schema and table when missing. `onError`: an idle connection lost.
 */
export async function openPostgresWitnessState(
  url: string,
  onError?: (error: Error) => void,
): Promise<WitnessState> {
  const target = targetOf(url);
  const pool = createPool(target, {
    max: 8,
    application: `case-read witness ${target.schema}`,
    store: WITNESS_STATE.what,
    ...(onError !== undefined ? { onError } : {}),
  });
  try {
    await migrate(pool, target.schema, WITNESS_STATE);
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  const tls = target.tls.assurance === 'none' ? 'no TLS' : `TLS ${target.tls.assurance}`;
  return new PostgresWitnessState(pool, `${displayPostgresUrl(url)} (schema ${target.schema}, ${tls})`);
}
