import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AUDIT_COLUMNS,
  auditTableSql,
  auditVersion2Sql,
  EMPTY_CHAIN,
  linkRecords,
  rowValuesOf,
} from '../../../src/adapters/shared/audit-chain.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { auditRecord, checkpointAt } from '../../contract/audit-log.contract.js';
import { openSqlite, pragma } from '../../support/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `audit-${++n}.db`);

const record = auditRecord;

/** What only the SQLite adapter promises; the port's contract is in test/contract. */
describe('SqliteAuditLog', () => {
  it('commits concurrent appends together, in the order appended, and the chain holds', async () => {
    const path = fresh();
    const log = SqliteAuditLog.open(path);
    const writes = Array.from({ length: 50 }, (_, i) => log.append(record(i + 1)));
    const reader = openSqlite(path, { readonly: true });
    // Nothing is committed until the turn ends…
    expect(reader.prepare('SELECT count(*) AS n FROM audit').get()).toEqual({ n: 0 });
    await Promise.all(writes);
    // …and then all of it is, before any append resolved.
    expect(reader.prepare('SELECT count(*) AS n FROM audit').get()).toEqual({ n: 50 });
    reader.close();
    expect((await log.query({})).map((r) => r.requestId)).toEqual(
      Array.from({ length: 50 }, (_, i) => `req-${i + 1}`),
    );
    expect(await log.verify()).toEqual({ ok: true, records: 50 });
    log.close();
  });

  it('commits each record before append resolves: another connection sees it at once', async () => {
    const path = fresh();
    const log = SqliteAuditLog.open(path);
    await log.append(record(1));
    const reader = openSqlite(path, { readonly: true });
    expect(reader.prepare('SELECT count(*) AS n FROM audit').get()).toEqual({ n: 1 });
    reader.close();
    log.close();
    expect(readFileSync(path).length).toBeGreaterThan(0);
  });

  it('migrates a version-2 trail to version 3 (checkpoints): the records keep verifying, checkpoints are kept', async () => {
    const path = fresh();
    const before = openSqlite(path);
    before.exec(auditTableSql({ seq: 'INTEGER', at: 'TEXT' }));
    before.exec(auditVersion2Sql);
    before.exec('PRAGMA user_version = 2');
    const insert = before.prepare(
      `INSERT INTO audit (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`,
    );
    const { stored, head } = linkRecords(
      [1, 2, 3].map((i) => record(i)),
      EMPTY_CHAIN,
    );
    for (const r of stored) insert.run(...rowValuesOf(r));
    before.close();
    const log = SqliteAuditLog.open(path);
    const db = openSqlite(path, { readonly: true });
    expect(pragma(db, 'user_version')).toBe(3);
    db.close();
    expect(await log.head()).toEqual(head);
    await log.saveCheckpoint(checkpointAt(3, head.hash));
    expect(await log.newestCheckpoint()).toEqual(checkpointAt(3, head.hash));
    expect(await log.verify()).toEqual({ ok: true, records: 3 });
    log.close();
  });
});
