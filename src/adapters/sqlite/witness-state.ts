import type { WitnessedCheckpoint, WitnessedHead, WitnessState } from '../../ports/witness-state.js';
import { checkpointOf, rootText, type WitnessRow, witnessLogsSql } from '../shared/witness-rows.js';
import { openWritableStore, sqliteStore, transaction } from './database.js';
import type { SqlDatabase, SqliteDriver } from './driver.js';

/**
 * A witness's record in one SQLite file (`WITNESS_STORE=sqlite:PATH`): a row per log, by
 * origin. Each advance is one write transaction that takes the lock before it reads (BEGIN
 * IMMEDIATE), so two witness processes on one file on one machine take turns; the file is
 * synced at each commit (`synchronous = FULL`), since tlog-witness asks that the new record be
 * durable before the cosignature is handed out.
 */

/** The witness state's schema, version by version. The root is kept in base64, as the checkpoint writes it. */
const WITNESS_STATE = sqliteStore(
  'witness state',
  [witnessLogsSql({ size: 'INTEGER', updated: 'TEXT NOT NULL', tableEnd: ' WITHOUT ROWID' })],
  { usableFrom: 1, createHint: 'case-read witness serve (it creates the file; its directory must exist)' },
);

/** A row as this driver reads it. */
interface Row extends WitnessRow {
  readonly size: number;
}

class SqliteWitnessState implements WitnessState {
  constructor(
    private readonly db: SqlDatabase,
    readonly description: string,
  ) {}

  private read(origin: string): WitnessedCheckpoint | undefined {
    return checkpointOf(
      this.db
        .prepare<[string], Row>('SELECT size, root, note FROM witness_logs WHERE origin = ?')
        .get(origin),
    );
  }

  async latest(origin: string): Promise<WitnessedCheckpoint | undefined> {
    return this.read(origin);
  }

  async advance(
    origin: string,
    expected: WitnessedHead,
    next: WitnessedCheckpoint,
  ): Promise<true | WitnessedCheckpoint | undefined> {
    const now = new Date().toISOString();
    const root = rootText(next.root);
    return transaction(
      this.db,
      () => {
        const changes =
          expected === undefined
            ? this.db
                .prepare<[string, number, string, string, string]>(
                  `INSERT INTO witness_logs (origin, size, root, note, updated) VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT (origin) DO NOTHING`,
                )
                .run(origin, next.size, root, next.note, now).changes
            : this.db
                .prepare<[number, string, string, string, string, number, string, number]>(
                  `UPDATE witness_logs SET size = ?, root = ?, note = ?, updated = ?
                   WHERE origin = ? AND size = ? AND root = ? AND size <= ?`,
                )
                .run(
                  next.size,
                  root,
                  next.note,
                  now,
                  origin,
                  expected.size,
                  rootText(expected.root),
                  next.size,
                ).changes;
        return changes === 1 ? true : this.read(origin);
      },
      'immediate',
    );
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}

/** Opens (creating if needed) the witness state in the SQLite file `path`. */
export function openSqliteWitnessState(path: string, driver?: SqliteDriver): WitnessState {
  const db = openWritableStore(path, WITNESS_STATE, driver);
  db.exec('PRAGMA synchronous = FULL');
  return new SqliteWitnessState(db, `sqlite:${path}`);
}
