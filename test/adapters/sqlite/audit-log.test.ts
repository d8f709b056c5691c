import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  auditCheckpointsSql,
  auditTableSql,
  auditVersion2Sql,
  CONTINUATIONS_SQL,
  checkpointValuesOf,
} from '../../../src/adapters/shared/audit-chain.js';
import { forgetBatchSql } from '../../../src/adapters/shared/audit-retention.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { AUDIT_STORE } from '../../../src/adapters/sqlite/audit-schema.js';
import {
  auditRecord,
  checkpointAt,
  continuationRecord,
  cosignatureLine,
} from '../../contract/audit-log.contract.js';
import { VERSION_TWO_COLUMNS, versionTwoChain, versionTwoRowValuesOf } from '../../support/audit-trails.js';
import { grownAndReferenceRoots } from '../../support/merkle-reference.js';
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

  /**
   * A trail as an older service left it: the schema up to `schemaVersion` (2: format-2
   * columns; 3: the checkpoints table too), holding three format-2 records.
   */
  function olderTrail(schemaVersion: 2 | 3) {
    const path = fresh();
    const before = openSqlite(path);
    before.exec(auditTableSql({ seq: 'INTEGER', at: 'TEXT' }));
    before.exec(auditVersion2Sql);
    if (schemaVersion === 3) before.exec(auditCheckpointsSql({ seq: 'INTEGER' }));
    before.exec(`PRAGMA user_version = ${schemaVersion}`);
    const insert = before.prepare(
      `INSERT INTO audit (${VERSION_TWO_COLUMNS.join(', ')}) VALUES (${VERSION_TWO_COLUMNS.map(() => '?').join(', ')})`,
    );
    const { stored, head } = versionTwoChain([1, 2, 3].map((i) => record(i)));
    for (const r of stored) insert.run(...versionTwoRowValuesOf(r));
    if (schemaVersion === 3) {
      // As the release before stored it: no note column yet.
      before
        .prepare('INSERT INTO audit_checkpoints (seq, head, time, key_id, signature) VALUES (?, ?, ?, ?, ?)')
        .run(...checkpointValuesOf(checkpointAt(2, stored[1]?.hash ?? '')).slice(0, 5));
    }
    before.close();
    return { path, head };
  }

  it('migrates a version-2 trail to the version this release needs (checkpoints, issued, tree, archive boundary, archive lease, witnesses, continuations): the records keep verifying, the chain continues', async () => {
    const { path, head } = olderTrail(2);
    const log = SqliteAuditLog.open(path);
    const db = openSqlite(path, { readonly: true });
    expect(pragma(db, 'user_version')).toBe(AUDIT_STORE.migrations.length);
    db.close();
    expect(await log.head()).toEqual(head);
    await log.saveCheckpoint(checkpointAt(3, head.hash));
    expect(await log.newestCheckpoint()).toEqual(checkpointAt(3, head.hash));
    expect(await log.verify()).toEqual({ ok: true, records: 3 });
    await log.append(record(4, { operation: 'renewCertificate', issued: '7F3A9C00E1' }));
    expect((await log.query({})).map((r) => [r.version, r.issued])).toEqual([
      [2, null],
      [2, null],
      [2, null],
      [4, '7F3A9C00E1'],
    ]);
    expect(await log.verify()).toEqual({ ok: true, records: 4 });
    // The tree grows over the records written before format 4 and after: RFC 9162's root of their entries.
    const roots = await grownAndReferenceRoots(log);
    expect(roots.grown).toBe(roots.reference);
    log.close();
  });

  it('migrates a version-3 trail to the version this release needs (issued, tree, archive boundary, archive lease, witnesses, continuations): format-2 records keep verifying, checkpoints are kept', async () => {
    const { path, head } = olderTrail(3);
    const log = SqliteAuditLog.open(path);
    const db = openSqlite(path, { readonly: true });
    expect(pragma(db, 'user_version')).toBe(AUDIT_STORE.migrations.length);
    db.close();
    expect(await log.head()).toEqual(head);
    expect((await log.newestCheckpoint())?.seq).toBe(2);
    expect(await log.verify()).toEqual({ ok: true, records: 3 });
    await log.append(record(4, { operation: 'renewCertificate', issued: '7F3A9C00E1' }));
    expect((await log.query({})).at(-1)).toMatchObject({ seq: 4, version: 4, issued: '7F3A9C00E1' });
    expect(await log.verify()).toEqual({ ok: true, records: 4 });
    // The tree grows over the records written before format 4 and after: RFC 9162's root of their entries.
    const roots = await grownAndReferenceRoots(log);
    expect(roots.grown).toBe(roots.reference);
    // A format-2 record given an issued certificate afterwards breaks the chain.
    const tamper = openSqlite(path);
    tamper.exec("UPDATE audit SET issued = '7F3A9C00E1' WHERE seq = 2");
    tamper.close();
    expect(await log.verify()).toMatchObject({
      ok: false,
      brokenAt: 2,
      reason: 'a version-2 record carries version-3 fields: it was changed',
    });
    log.close();
  });

  it('reads continuation records through their own partial index, and lets go of archived records by seq, never scanning for them', async () => {
    const path = fresh();
    const log = SqliteAuditLog.open(path);
    await log.append(record(1));
    await log.append(continuationRecord(2));
    const db = openSqlite(path, { readonly: true });
    try {
      const plan = (sql: string, ...values: unknown[]) =>
        db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...values)
          .map((row) => row.detail)
          .join('; ');
      expect(plan(CONTINUATIONS_SQL)).toMatch(/USING INDEX audit_continuations/);
      expect(
        plan(
          forgetBatchSql(() => '?'),
          0,
          10,
        ),
      ).toMatch(/USING INTEGER PRIMARY KEY/);
      expect(
        db
          .prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'audit_continuations'")
          .get()?.sql,
      ).toMatch(/ON audit \(seq\) WHERE continuation IS NOT NULL/);
    } finally {
      db.close();
    }
    expect((await log.continuations()).map((r) => r.seq)).toEqual([2]);
    log.close();
  });

  it('keeps cosignatures as lines joined by newlines; a column changed behind its back makes the checkpoint unreadable, a bad size is left out', async () => {
    const path = fresh();
    const log = SqliteAuditLog.open(path);
    await log.append(record(1));
    const checkpoint = checkpointAt(1, (await log.head()).hash);
    await log.saveCheckpoint(checkpoint);
    const [a, b] = [cosignatureLine('w1.example', 1), cosignatureLine('w2.example', 2)];
    await log.addCosignatures(checkpoint, [a, b]);
    await log.saveWitnessSize('w1.example+1a2b3c4d+BHCKmT', 1);
    await log.saveWitnessSize('w2.example+5e6f7a8b+BEZVk0', 2);
    const db = openSqlite(path);
    expect(db.prepare('SELECT cosignatures FROM audit_checkpoints').get()).toEqual({
      cosignatures: `${a}\n${b}`,
    });
    db.prepare('UPDATE audit_checkpoints SET cosignatures = ?').run(`${a}\n\n${b}`);
    db.prepare("UPDATE audit_witness_sizes SET size = -1 WHERE vkey LIKE 'w2%'").run();
    db.close();
    const read = [];
    for await (const c of log.checkpoints()) read.push(c);
    expect(read).toEqual([
      { invalid: 'stored checkpoint at seq 1: cosignature 2 is not a signature line "— NAME BASE64"' },
    ]);
    expect(await log.newestCheckpoint()).toBeUndefined();
    expect(await log.witnessSizes()).toEqual(new Map([['w1.example+1a2b3c4d+BHCKmT', 1]]));
    log.close();
  });
});
