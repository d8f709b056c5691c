/**
 * The records naming one crn (decisions §22), read through the audit table's index by crn
 * (`audit_by_crn`, on crn and time) in both SQL stores: written once here, paged by keyset on
 * seq, so a subject access request reads that crn's records and never walks the trail.
 */
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import type { TimeWindow } from '../../ports/audit-log.js';
import { type AuditRow, recordOfRow } from './audit-chain.js';

/** Records read per round trip. */
export const CRN_BATCH = 1000;

/** One page's query: its text, and its values after a seq. */
export interface CrnPage {
  readonly text: string;
  values(afterSeq: number): unknown[];
}

/**
 * The query of one page of `crn`'s records in `window`, with the engine's placeholders. `hint`
 * names the index where the engine takes one (SQLite's `INDEXED BY`): without statistics its
 * planner would walk the table by seq to spare the sort, which is the walk this exists to avoid.
 */
export function crnPageSql(
  crn: string,
  window: TimeWindow,
  placeholder: (n: number) => string,
  hint = '',
): CrnPage {
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
  const text = `SELECT * FROM audit ${hint} WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${placeholder(fixed.length + 2)}`;
  return { text, values: (after) => [...fixed, after, CRN_BATCH] };
}

/** The records of `page`, a batch at a time, until a page comes back short. */
export async function* recordsNamingByPages(
  page: CrnPage,
  read: (text: string, values: unknown[]) => Promise<readonly AuditRow[]> | readonly AuditRow[],
): AsyncGenerator<readonly StoredAuditRecord[]> {
  let after = 0;
  for (;;) {
    const rows = await read(page.text, page.values(after));
    if (rows.length === 0) return;
    const records = rows.map(recordOfRow);
    after = (records.at(-1) as StoredAuditRecord).seq;
    yield records;
    if (rows.length < CRN_BATCH) return;
  }
}
