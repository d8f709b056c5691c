import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_STORE as POSTGRES_ACCESS } from '../../src/adapters/postgres/access-schema.js';
import { ACCESS_STORE as SQLITE_ACCESS } from '../../src/adapters/sqlite/access-schema.js';
import { runCli, runCliConcurrently } from '../support/cli.js';
import { testSchema } from '../support/postgres.js';
import { openSqlite, pragma } from '../support/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const freshPath = (label: string) => join(dir, `${label}-${++files}.db`);

/** An access store as a release that knew `version` migrations left it: no usable-from record. */
function sqliteAccessAt(version: number): string {
  const path = freshPath('access');
  const db = openSqlite(path, { readonly: false });
  db.exec('PRAGMA journal_mode = WAL');
  for (const sql of SQLITE_ACCESS.migrations.slice(0, version)) db.exec(sql);
  db.exec(
    `INSERT INTO clients (id, permissions, suspended) VALUES ('kept', 'getCase', 0); PRAGMA user_version = ${version}`,
  );
  db.close();
  return path;
}

const versionOf = (path: string) => {
  const db = openSqlite(path, { readonly: true });
  try {
    return pragma(db, 'user_version');
  } finally {
    db.close();
  }
};

const PREVIOUS = SQLITE_ACCESS.migrations.length - 1;
const CURRENT = SQLITE_ACCESS.migrations.length;

describe('case-read stores migrate on SQLite', () => {
  it('migrates a store of the previous release, says its version before and after, and leaves missing stores missing', () => {
    const access = sqliteAccessAt(PREVIOUS);
    const cases = freshPath('cases');
    const audit = freshPath('audit');
    const env = {
      ACCESS_STORE: `sqlite:${access}`,
      CASE_STORE: `sqlite:${cases}`,
      AUDIT_STORE: `sqlite:${audit}`,
    };
    const first = runCli(['stores', 'migrate'], env);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout.split('\n')).toEqual([
      `case store sqlite:${cases}: absent, not created (nothing to migrate)`,
      `access store sqlite:${access}: version ${PREVIOUS} -> ${CURRENT}, migrated`,
      `audit store sqlite:${audit}: absent, not created (nothing to migrate)`,
      '',
    ]);
    expect(existsSync(cases)).toBe(false);
    expect(existsSync(audit)).toBe(false);
    expect(versionOf(access)).toBe(CURRENT);

    const again = runCli(['stores', 'migrate', '--json'], env);
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout).stores[1]).toEqual({
      store: 'access store',
      url: `sqlite:${access}`,
      outcome: 'current',
      before: CURRENT,
      after: CURRENT,
      current: CURRENT,
    });
    // Nothing but the schema changed: the client the previous release wrote is there.
    const db = openSqlite(access, { readonly: true });
    expect(db.prepare('SELECT id, permissions FROM clients').all()).toEqual([
      { id: 'kept', permissions: 'getCase' },
    ]);
    db.close();
  });

  it('two processes migrating one store at once: one migrates it, the other finds it current', async () => {
    const access = sqliteAccessAt(PREVIOUS);
    const env = {
      ACCESS_STORE: `sqlite:${access}`,
      CASE_STORE: `sqlite:${freshPath('cases')}`,
      AUDIT_STORE: `jsonl:${join(dir, 'audit.jsonl')}`,
    };
    const both = await Promise.all([0, 1].map(() => runCliConcurrently(['stores', 'migrate'], env)));
    for (const run of both) {
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('audit store jsonl:');
      expect(run.stdout).toContain('keeps no schema (nothing to migrate)');
    }
    const lines = both.map((run) => run.stdout.split('\n')[1]);
    expect(
      lines.filter((line) => line?.endsWith(`version ${PREVIOUS} -> ${CURRENT}, migrated`)),
    ).toHaveLength(1);
    expect(
      lines.filter((line) => line?.endsWith(`version ${CURRENT}, current (nothing to do)`)),
    ).toHaveLength(1);
    expect(versionOf(access)).toBe(CURRENT);
  });

  it('a store URL that does not parse touches no store: a usage error naming the option', () => {
    const access = sqliteAccessAt(PREVIOUS);
    const result = runCli([
      'stores',
      'migrate',
      '--access-store',
      `sqlite:${access}`,
      '--audit-store',
      'nope:x',
    ]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^case-read: --audit-store: expected /);
    expect(versionOf(access)).toBe(PREVIOUS);
  });

  it('a store that cannot be reached is named and fails the command; the others are still migrated', () => {
    const access = sqliteAccessAt(PREVIOUS);
    const result = runCli(['stores', 'migrate', '--json'], {
      CASE_STORE: 'postgres://root@127.0.0.1:1/test',
      ACCESS_STORE: `sqlite:${access}`,
      AUDIT_STORE: `jsonl:${join(dir, 'reached.jsonl')}`,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('case-read: case store not migrated; nothing else was changed in it\n');
    const [cases, migrated, audit] = JSON.parse(result.stdout).stores;
    expect(cases).toMatchObject({
      store: 'case store',
      outcome: 'failed',
      error: expect.stringMatching(/cannot be reached/),
    });
    expect(migrated).toMatchObject({ outcome: 'migrated', before: PREVIOUS, after: CURRENT });
    expect(audit).toEqual({
      store: 'audit store',
      url: `jsonl:${join(dir, 'reached.jsonl')}`,
      outcome: 'no-schema',
    });
  });
});

describe('case-read stores migrate on PostgreSQL', () => {
  it("migrates the previous release's access store once when two processes run at once, and creates no absent store", async () => {
    const schema = testSchema('migrate_cli');
    try {
      // The schema as the previous release left it: its record table had no usable_from.
      await schema.query(`CREATE SCHEMA ${schema.name}`);
      await schema.query('CREATE TABLE case_read_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)');
      for (const sql of POSTGRES_ACCESS.migrations.slice(0, PREVIOUS)) await schema.query(sql);
      await schema.query("INSERT INTO case_read_schema VALUES ('access store', $1)", [PREVIOUS]);
      const both = await Promise.all(
        [0, 1].map(() =>
          runCliConcurrently(['stores', 'migrate'], {
            CASE_STORE: schema.url,
            ACCESS_STORE: schema.url,
            AUDIT_STORE: schema.url,
          }),
        ),
      );
      for (const run of both) {
        expect(run.stderr).toBe('');
        expect(run.status).toBe(0);
        expect(run.stdout).toMatch(
          /^case store postgres:\/\/root@127\.0\.0\.1:5432\/test\?schema=\w+: absent/,
        );
      }
      const outcomes = both.map((run) => run.stdout.split('\n')[1]?.replace(/^.*\w: /, ''));
      expect(outcomes.sort()).toEqual([
        `version ${PREVIOUS} -> ${CURRENT}, migrated`,
        `version ${CURRENT}, current (nothing to do)`,
      ]);
      expect((await schema.query('SELECT store, version, usable_from FROM case_read_schema')).rows).toEqual([
        { store: 'access store', version: CURRENT, usable_from: POSTGRES_ACCESS.usableFrom },
      ]);
      const tables = await schema.query(
        "SELECT to_regclass('cases') IS NULL AS no_cases, to_regclass('audit') IS NULL AS no_audit",
      );
      expect(tables.rows).toEqual([{ no_cases: true, no_audit: true }]);
    } finally {
      await schema.drop();
    }
  });
});
