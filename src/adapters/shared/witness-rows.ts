// How a witness's record of a log is kept in a row, for every store that keeps it (SQLite,
// PostgreSQL): the table, one row per log by origin; the root in base64, as the checkpoint
// writes it; the size as the driver gives it (a number, or PostgreSQL's BIGINT as text).
import type { WitnessedCheckpoint } from '../../ports/witness-state.js';

/**
 * The witness state's table, as both SQL stores create it: only the types of the size and the
 * update time differ between engines, and what ends the table (SQLite's ` WITHOUT ROWID`).
 */
export const witnessLogsSql = (types: {
  readonly size: string;
  readonly updated: string;
  readonly tableEnd?: string;
}) => `CREATE TABLE witness_logs (
       origin  TEXT PRIMARY KEY,
       size    ${types.size} NOT NULL CHECK (size >= 0),
       root    TEXT NOT NULL,
       note    TEXT NOT NULL,
       updated ${types.updated}
     )${types.tableEnd ?? ''}`;

/** A row of `witness_logs` as read. */
export interface WitnessRow {
  readonly size: number | string;
  readonly root: string;
  readonly note: string;
}

/** The root as a row keeps it. */
export const rootText = (root: Uint8Array): string => Buffer.from(root).toString('base64');

/** The checkpoint a row holds; none when there is no row. */
export const checkpointOf = (row: WitnessRow | undefined): WitnessedCheckpoint | undefined =>
  row === undefined
    ? undefined
    : { size: Number(row.size), root: new Uint8Array(Buffer.from(row.root, 'base64')), note: row.note };
