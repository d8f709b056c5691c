/**
 * The records naming one crn (decisions §22) in both SQL stores, read through the audit
 * table's index by crn (`audit_by_crn`, on crn and time): the SQL written once here, so a
 * subject access request reads that crn's records and never walks the trail.
 */
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import type { TimeWindow } from '../../ports/audit-log.js';
import { type AuditRow, recordOfRow } from './audit-chain.js';

export type { TimeWindow };

/** Records per batch given, each batch read by its seqs in one round trip. */
export const CRN_BATCH = 1000;

/**
 * Seqs read from the index per round trip. Each read walks the crn's entries in the window
 * (the index is by crn and time, not seq, so it sorts them by seq for the page); reading many
 * seqs at once keeps the walks few (linear in the crn's records, not quadratic), and memory
 * bounded (the seqs of one read, never the records).
 */
export const CRN_KEY_PAGE = 50_000;

/** How one engine is asked: its placeholders, and the hint that names the index where it takes one. */
export interface CrnSqlDialect {
  readonly placeholder: (n: number) => string;
  /** SQLite's `INDEXED BY audit_by_crn`: without statistics its planner would walk the table by seq to spare the sort. */
  readonly hint?: string;
}

export const SQLITE_CRN: CrnSqlDialect = { placeholder: () => '?', hint: 'INDEXED BY audit_by_crn' };
export const POSTGRES_CRN: CrnSqlDialect = { placeholder: (n) => `$${n}` };

/**
 * The query of a page of the seqs of `crn`'s records in `window` after a seq, and its values.
 * `crn = ?` implies the partial index's `crn IS NOT NULL`, so both engines can use it.
 */
export function crnKeysSql(
  crn: string,
  window: TimeWindow,
  { placeholder, hint = '' }: CrnSqlDialect,
): { readonly text: string; values(afterSeq: number, limit: number): unknown[] } {
  const fixed: unknown[] = [crn];
  const where = [`crn = ${placeholder(1)}`];
  if (window.from !== undefined) {
    fixed.push(window.from.toISOString());
    where.push(`at >= ${placeholder(fixed.length)}`);
  }
  if (window.to !== undefined) {
    fixed.push(window.to.toISOString());
    where.push(`at < ${placeholder(fixed.length)}`);
  }
  where.push(`seq > ${placeholder(fixed.length + 1)}`);
  const text = `SELECT seq FROM audit ${hint} WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${placeholder(fixed.length + 2)}`;
  return { text, values: (after, limit) => [...fixed, after, limit] };
}

/** The query of the records at `count` seqs (by the primary key), in seq order. */
export const crnRowsSql = (count: number, { placeholder }: CrnSqlDialect): string =>
  `SELECT * FROM audit WHERE seq IN (${Array.from({ length: count }, (_, i) => placeholder(i + 1)).join(', ')}) ORDER BY seq`;

/** Runs a query with its values and gives its rows (throws, or rejects, when it cannot). */
export type CrnRead = (text: string, values: unknown[]) => Promise<readonly unknown[]> | readonly unknown[];

/**
 * The records naming `crn` in `window`, in seq order, {@link CRN_BATCH} at a time: the seqs
 * read from the index a page at a time (keyset on seq), then the records at them, the event
 * loop let through between batches. A record let go of between the two reads is not given (it
 * is no longer held); a failed read rejects, never ends the walk early.
 */
export async function* recordsNamingSql(
  crn: string,
  window: TimeWindow | undefined,
  dialect: CrnSqlDialect,
  read: CrnRead,
  keyPage = CRN_KEY_PAGE,
): AsyncGenerator<readonly StoredAuditRecord[]> {
  const keys = crnKeysSql(crn, window ?? {}, dialect);
  let after = 0;
  for (;;) {
    const seqs = (
      (await read(keys.text, keys.values(after, keyPage))) as readonly { seq: number | string }[]
    ).map((row) => Number(row.seq));
    for (let i = 0; i < seqs.length; i += CRN_BATCH) {
      const some = seqs.slice(i, i + CRN_BATCH);
      const rows = (await read(crnRowsSql(some.length, dialect), some)) as readonly AuditRow[];
      // The same records as the index named (a row changed since no longer names the crn).
      const records = rows.map(recordOfRow).filter((record) => record.crn === crn);
      if (records.length > 0) yield records;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (seqs.length < keyPage) return;
    after = seqs.at(-1) as number;
  }
}
