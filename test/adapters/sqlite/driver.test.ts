import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteCaseRepository, SqliteCaseWriter } from '../../../src/adapters/sqlite/case-store.js';
import {
  driverPreference,
  type SqlDatabase,
  sqliteDriver,
  sqliteErrorCode,
} from '../../../src/adapters/sqlite/driver.js';
import { runtimeOf } from '../../../src/app/composition/runtime.js';
import { Crn } from '../../../src/domain/crn.js';
import { fixtureCases } from '../../support/fixtures.js';

/**
 * The driver seam, on whichever runtime runs this file: `npm test` runs it under Node
 * (better-sqlite3), Bun (bun:sqlite) and Deno (node:sqlite). What the stores rely on is
 * asserted here; the stores' own contract suites run beside it on the same driver.
 */
const dir = mkdtempSync(join(tmpdir(), 'case-read-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `db-${++n}.sqlite`);

const EXPECTED = { node: 'better-sqlite3', bun: 'bun:sqlite', deno: 'node:sqlite' } as const;

describe(`SQLite driver on ${runtimeOf().name}`, () => {
  it(`is the runtime's own: ${EXPECTED[runtimeOf().name]}`, () => {
    expect(sqliteDriver().name).toBe(EXPECTED[runtimeOf().name]);
  });

  const withDb = (run: (db: SqlDatabase) => void) => {
    const db = sqliteDriver().open(fresh(), { readonly: false });
    try {
      run(db);
    } finally {
      db.close();
    }
  };

  it('reads a missing row as undefined, and values with their types', () => {
    withDb((db) => {
      db.exec('CREATE TABLE t (i INTEGER, r REAL, s TEXT, z TEXT)');
      db.prepare('INSERT INTO t VALUES (?, ?, ?, ?)').run(42, 2.5, 'é🙂', null);
      const select = db.prepare<[number], { i: number; r: number; s: string; z: null }>(
        'SELECT * FROM t WHERE i = ?',
      );
      expect(select.get(7)).toBeUndefined();
      expect({ ...select.get(42) }).toStrictEqual({ i: 42, r: 2.5, s: 'é🙂', z: null });
      expect(select.all(42).map((row) => ({ ...row }))).toStrictEqual([{ i: 42, r: 2.5, s: 'é🙂', z: null }]);
      expect(select.all(7)).toStrictEqual([]);
    });
  });

  it('counts changed rows and knows whether a transaction is open', () => {
    withDb((db) => {
      db.exec('CREATE TABLE t (i INTEGER)');
      expect(db.prepare('INSERT INTO t VALUES (1), (2), (3)').run().changes).toBe(3);
      expect(db.inTransaction).toBe(false);
      db.exec('BEGIN');
      expect(db.inTransaction).toBe(true);
      expect(db.prepare('DELETE FROM t WHERE i > ?').run(1).changes).toBe(2);
      db.exec('ROLLBACK');
      expect(db.inTransaction).toBe(false);
      expect(db.prepare<[], { n: number }>('SELECT count(*) AS n FROM t').get()?.n).toBe(3);
    });
  });

  it('keeps a NUL inside text when it is read as JSON, as the stores read free text', () => {
    withDb((db) => {
      db.exec('CREATE TABLE t (s TEXT)');
      db.prepare('INSERT INTO t VALUES (?)').run("O'Brien\u0000x");
      const row = db
        .prepare<[], { j: string; len: number }>(
          'SELECT json_quote(s) AS j, length(CAST(s AS BLOB)) AS len FROM t',
        )
        .get();
      expect(row?.len).toBe(9);
      expect(JSON.parse(row?.j ?? 'null')).toBe("O'Brien\u0000x");
    });
  });

  it('is closed after close', () => {
    const db = sqliteDriver().open(fresh(), { readonly: false });
    expect(db.isOpen).toBe(true);
    db.close();
    expect(db.isOpen).toBe(false);
  });

  it('opens read-only only an existing file, and refuses writes through it', () => {
    expect(() => sqliteDriver().open(join(dir, 'absent.sqlite'), { readonly: true })).toThrow();
    const path = fresh();
    const writer = sqliteDriver().open(path, { readonly: false });
    writer.exec('CREATE TABLE t (i INTEGER)');
    writer.close();
    const reader = sqliteDriver().open(path, { readonly: true });
    let error: unknown;
    try {
      reader.exec('INSERT INTO t VALUES (1)');
    } catch (caught) {
      error = caught;
    }
    reader.close();
    expect(sqliteErrorCode(error)).toBe('SQLITE_READONLY');
  });

  it("names SQLite's error code whichever way the driver reports it", () => {
    withDb((db) => {
      let error: unknown;
      try {
        db.prepare('SELECT * FROM no_such_table');
      } catch (caught) {
        error = caught;
      }
      expect(sqliteErrorCode(error)).toBe('SQLITE_ERROR');
    });
    expect(sqliteErrorCode({ code: 'ERR_SQLITE_ERROR', errcode: 5 })).toBe('SQLITE_BUSY');
    expect(sqliteErrorCode({ code: 'ERR_SQLITE_ERROR', errcode: 266 })).toBe('SQLITE_IOERR'); // SQLITE_IOERR_READ
    expect(
      sqliteErrorCode(Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR' })),
    ).toBe('SQLITE_BUSY');
    expect(sqliteErrorCode(new Error('database is locked'))).toBe('error');
  });

  it('stores every fixture case as the very bytes JSON.stringify gives for its personal details', async () => {
    const path = fresh();
    const cases = fixtureCases();
    const writer = SqliteCaseWriter.open(path);
    writer.write(cases);
    writer.close();
    const repository = SqliteCaseRepository.openReadOnly(path);
    for (const record of cases) {
      expect((await repository.findPersonalDetailsText(Crn.parse(record.crn)))?.value).toBe(
        JSON.stringify(record.personalDetails),
      );
    }
    repository.close();
  });
});

describe('driverPreference', () => {
  it("takes Bun's and Deno's own driver there, and better-sqlite3 before node:sqlite on Node", () => {
    expect(driverPreference('bun')).toStrictEqual(['bun:sqlite']);
    expect(driverPreference('deno')).toStrictEqual(['node:sqlite']);
    expect(driverPreference('node')).toStrictEqual(['better-sqlite3', 'node:sqlite']);
  });
});
