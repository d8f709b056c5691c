import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../../../src/adapters/postgres/store-kind.js';
import { crnPageSql } from '../../../src/adapters/shared/audit-by-crn.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import type { AuditLog } from '../../../src/ports/audit-log.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { testSchema } from '../../support/postgres.js';
import { testContext } from '../../support/stores.js';

/**
 * The records naming one crn read through the index by crn (decisions §22), beyond the
 * contract: the SQL store reads the index, never the table in seq order (a subject access
 * request costs that crn's records, not the trail's); several instances on one PostgreSQL
 * trail give the same answer.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-by-crn-'));
const schema = testSchema('by_crn');
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the records of one crn in SQLite', () => {
  it('are read through audit_by_crn, with or without a window, never by a scan of the table', async () => {
    const file = join(dir, 'audit.db');
    const log = SqliteAuditLog.open(file);
    for (let i = 1; i <= 50; i++) await log.append(auditRecord(i));
    log.close();
    const db = new Database(file, { readonly: true });
    const windows = [{}, { from: new Date(0) }, { to: new Date() }, { from: new Date(0), to: new Date() }];
    for (const window of windows) {
      const page = crnPageSql('X123456', window, () => '?', 'INDEXED BY audit_by_crn');
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${page.text}`)
        .all(...page.values(0))
        .map((row) => (row as { detail: string }).detail)
        .join('; ');
      expect(plan).toMatch(/SEARCH audit USING INDEX audit_by_crn \(crn=/);
      expect(plan).not.toMatch(/SCAN audit/);
    }
    db.close();
  });
});

describe('the records of one crn in PostgreSQL', () => {
  const open = async (): Promise<AuditLog> => {
    const opened = await postgresStores.audit?.open(schema.url, testContext, { create: true });
    if (!opened) throw new Error('postgres cannot hold the audit trail');
    closers.push(() => opened.close());
    return opened.value;
  };

  it('are the same, every one, read from either of two instances appending to one trail', async () => {
    const [one, two] = [await open(), await open()];
    await Promise.all(
      Array.from({ length: 60 }, (_, k) =>
        (k % 2 ? one : two).append(auditRecord(k + 1, { requestId: `req-${k + 1}` })),
      ),
    );
    const seqsOf = async (log: AuditLog) => {
      const found = [];
      for await (const batch of log.recordsNaming('X123456')) found.push(...batch.map((r) => r.requestId));
      return found;
    };
    const fromOne = await seqsOf(one);
    expect(fromOne).toEqual(await seqsOf(two));
    const expected = Array.from({ length: 60 }, (_, k) => k + 1).filter(
      (i) => auditRecord(i).crn === 'X123456',
    );
    expect([...fromOne].sort()).toEqual(expected.map((i) => `req-${i}`).sort());
    expect(fromOne).toHaveLength(expected.length);
  });
});
