import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import type { AuditRecord } from '../../../src/domain/audit/record.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `audit-${++n}.db`);

const record = (i: number, overrides: Partial<AuditRecord> = {}): AuditRecord => ({
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  requestId: `req-${i}`,
  clientId: i % 2 ? 'client-a' : 'client-b',
  certificateSerial: 'AB12',
  onBehalfOf: i === 3 ? 'officer@probation.example' : null,
  operation: 'getCase',
  crn: i % 3 ? 'X123456' : 'A000001',
  status: 200,
  ...overrides,
});

describe('SqliteAuditLog', () => {
  it('numbers records in order and continues the chain after reopening', async () => {
    const path = fresh();
    const first = SqliteAuditLog.open(path);
    for (let i = 1; i <= 3; i++) await first.append(record(i));
    first.close();
    const again = SqliteAuditLog.open(path);
    await again.append(record(4));
    const all = again.query({});
    expect(all.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(all[3]?.previousHash).toBe(all[2]?.hash);
    expect(all[2]).toMatchObject({
      onBehalfOf: 'officer@probation.example',
      requestId: 'req-3',
      at: record(3).at,
    });
    expect(again.verify()).toEqual({ ok: true, records: 4 });
    again.close();
  });

  it('queries by client, crn and time, oldest first, with a limit', async () => {
    const log = SqliteAuditLog.open(fresh());
    for (let i = 1; i <= 6; i++) await log.append(record(i));
    expect(log.query({ clientId: 'client-a' }).map((r) => r.seq)).toEqual([1, 3, 5]);
    expect(log.query({ crn: 'A000001' }).map((r) => r.seq)).toEqual([3, 6]);
    expect(log.query({ since: record(4).at }).map((r) => r.seq)).toEqual([4, 5, 6]);
    expect(log.query({ clientId: 'client-b', since: record(3).at }).map((r) => r.seq)).toEqual([4, 6]);
    expect(log.query({ limit: 2 }).map((r) => r.seq)).toEqual([1, 2]);
    log.close();
  });

  it.each([
    ['a changed status', 'UPDATE audit SET status = 404 WHERE seq = 2', 2, /changed/],
    ['a removed record', 'DELETE FROM audit WHERE seq = 2', 3, /missing/],
    ['a rewritten crn', "UPDATE audit SET crn = 'Z999999' WHERE seq = 3", 3, /changed/],
  ])('verify finds %s', async (_label, sql, brokenAt, reason) => {
    const path = fresh();
    const log = SqliteAuditLog.open(path);
    for (let i = 1; i <= 4; i++) await log.append(record(i));
    log.close();
    const db = new Database(path);
    db.exec(sql);
    db.close();
    const reopened = SqliteAuditLog.open(path);
    const result = reopened.verify();
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ brokenAt, reason: expect.stringMatching(reason) });
    reopened.close();
  });

  it('commits concurrent appends together, in the order appended, and the chain holds', async () => {
    const path = fresh();
    const log = SqliteAuditLog.open(path);
    const writes = Array.from({ length: 50 }, (_, i) => log.append(record(i + 1)));
    const reader = new Database(path, { readonly: true });
    // Nothing is committed until the turn ends…
    expect(reader.prepare('SELECT count(*) AS n FROM audit').get()).toEqual({ n: 0 });
    await Promise.all(writes);
    // …and then all of it is, before any append resolved.
    expect(reader.prepare('SELECT count(*) AS n FROM audit').get()).toEqual({ n: 50 });
    reader.close();
    expect(log.query({}).map((r) => r.requestId)).toEqual(
      Array.from({ length: 50 }, (_, i) => `req-${i + 1}`),
    );
    expect(log.verify()).toEqual({ ok: true, records: 50 });
    log.close();
  });

  it('rejects every append of a batch that cannot be committed, and keeps the chain where it was', async () => {
    const path = fresh();
    const log = SqliteAuditLog.open(path);
    await log.append(record(1));
    const other = new Database(path);
    other.exec("CREATE TRIGGER refuse BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk full'); END");
    const results = await Promise.allSettled([log.append(record(2)), log.append(record(3))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    other.exec('DROP TRIGGER refuse');
    other.close();
    await log.append(record(4));
    expect(log.query({}).map((r) => [r.seq, r.requestId])).toEqual([
      [1, 'req-1'],
      [2, 'req-4'],
    ]);
    expect(log.verify()).toEqual({ ok: true, records: 2 });
    log.close();
  });

  it('commits each record before append resolves: another connection sees it at once', async () => {
    const path = fresh();
    const log = SqliteAuditLog.open(path);
    await log.append(record(1));
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare('SELECT count(*) AS n FROM audit').get()).toEqual({ n: 1 });
    reader.close();
    log.close();
    expect(readFileSync(path).length).toBeGreaterThan(0);
  });
});
