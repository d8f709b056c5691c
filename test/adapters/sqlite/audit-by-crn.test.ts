/**
 * The SQLite audit store's reading of one crn's records (decisions §22), beyond the contract:
 * through the index by crn and never a walk of the table (its query plan), paged by seq with
 * none lost or repeated across pages of the index, and a failed read rejected.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CRN_BATCH,
  type CrnRead,
  crnKeysSql,
  crnRowsSql,
  recordsNamingSql,
  SQLITE_CRN,
  type TimeWindow,
} from '../../../src/adapters/shared/audit-by-crn.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import type { StoredAuditRecord } from '../../../src/domain/audit/record.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { openSqlite } from '../../support/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-audit-by-crn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `audit-${++n}.db`);

const WINDOWS: readonly TimeWindow[] = [
  {},
  { from: new Date(Date.UTC(2026, 0, 1)) },
  { to: new Date(Date.UTC(2027, 0, 1)) },
  { from: new Date(Date.UTC(2026, 0, 1)), to: new Date(Date.UTC(2027, 0, 1)) },
];

/** Every batch of `batches`, flattened, each checked to be neither empty nor over a batch. */
async function flattened(batches: AsyncIterable<readonly StoredAuditRecord[]>) {
  const seqs: number[] = [];
  let count = 0;
  for await (const batch of batches) {
    expect(batch.length).toBeGreaterThan(0);
    expect(batch.length).toBeLessThanOrEqual(CRN_BATCH);
    seqs.push(...batch.map((r) => r.seq));
    count++;
  }
  return { seqs, batches: count };
}

const crnOf = (i: number) => (i % 10 === 0 ? 'A000001' : i % 10 === 5 ? null : 'X123456');

/** A store of `records` records: crn X123456 but every 10th (A000001) and every 10th + 5 (none). */
async function trail(records: number): Promise<string> {
  const path = fresh();
  const log = SqliteAuditLog.open(path);
  await Promise.all(
    Array.from({ length: records }, (_, k) => log.append(auditRecord(k + 1, { crn: crnOf(k + 1) }))),
  );
  log.close();
  return path;
}
const namingX = (records: number) =>
  Array.from({ length: records }, (_, k) => k + 1).filter((i) => i % 10 !== 0 && i % 10 !== 5);

describe("SQLite: one crn's records", () => {
  it('reads the seqs from audit_by_crn alone and the records by primary key: never a scan of the table', async () => {
    const path = await trail(2600);
    const db = openSqlite(path);
    // With statistics (ANALYZE, an operator's PRAGMA optimize) the planner would rather walk the
    // table by seq than sort a crn as common as X123456: the store names the index.
    db.exec('ANALYZE');
    const planOf = (text: string, values: unknown[]) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${text}`)
        .all(...values)
        .map((row) => String(row.detail))
        .join('; ');
    for (const window of WINDOWS) {
      const keys = crnKeysSql('X123456', window, SQLITE_CRN);
      const plan = planOf(keys.text, keys.values(0, 10));
      const bounds = [window.from && 'at>?', window.to && 'at<?'].filter(Boolean).join(' AND ');
      expect(plan).toContain(
        `SEARCH audit USING COVERING INDEX audit_by_crn (crn=?${bounds && ` AND ${bounds}`})`,
      );
      expect(plan).not.toMatch(/\bSCAN\b/);
    }
    const rows = planOf(crnRowsSql(3, SQLITE_CRN), [1, 2, 3]);
    expect(rows).toMatch(/^SEARCH audit USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expect(rows).not.toMatch(/\bSCAN\b/);
    db.close();
  });

  it('pages by seq through several pages of the index and batches: none lost or repeated', async () => {
    const path = await trail(2600);
    const db = openSqlite(path, { readonly: true });
    const texts: string[] = [];
    const read: CrnRead = (text, values) => {
      texts.push(text);
      return db.prepare(text).all(...values);
    };
    // Pages of 1500 seqs: batches of 1000 and 500, then the rest.
    const all = await flattened(recordsNamingSql('X123456', undefined, SQLITE_CRN, read, 1500));
    expect(all.seqs).toEqual(namingX(2600));
    expect(all.batches).toBe(3);
    expect(texts.filter((text) => text.startsWith('SELECT seq')).length).toBe(2);
    // A page of the index ending exactly at the last seq: one more read finds none.
    texts.length = 0;
    const exact = await flattened(recordsNamingSql('X123456', undefined, SQLITE_CRN, read, 1040));
    expect(exact.seqs).toEqual(namingX(2600));
    expect(texts.filter((text) => text.startsWith('SELECT seq')).length).toBe(3);
    const window = { from: auditRecord(1000).at, to: auditRecord(2001).at };
    expect((await flattened(recordsNamingSql('X123456', window, SQLITE_CRN, read, 700))).seqs).toEqual(
      namingX(2600).filter((i) => i >= 1000 && i < 2001),
    );
    db.close();
  });

  it('rejects when a read fails, never ending as if there were no more', async () => {
    const path = await trail(2600);
    const db = openSqlite(path, { readonly: true });
    let reads = 0;
    const failing: CrnRead = (text, values) => {
      if (++reads === 3) throw new Error('disk I/O error');
      return db.prepare(text).all(...values);
    };
    await expect(flattened(recordsNamingSql('X123456', {}, SQLITE_CRN, failing))).rejects.toThrow(
      'disk I/O error',
    );
    db.close();
    const log = SqliteAuditLog.open(path);
    log.close();
    await expect(flattened(log.recordsNaming('X123456'))).rejects.toThrow();
  });
});
