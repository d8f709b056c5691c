import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_STORE as POSTGRES_ACCESS } from '../../src/adapters/postgres/access-schema.js';
import { AUDIT_STORE as POSTGRES_AUDIT } from '../../src/adapters/postgres/audit-log.js';
import { CASE_STORE as POSTGRES_CASE } from '../../src/adapters/postgres/case-store.js';
import { ACCESS_STORE as SQLITE_ACCESS } from '../../src/adapters/sqlite/access-schema.js';
import { AUDIT_STORE as SQLITE_AUDIT } from '../../src/adapters/sqlite/audit-schema.js';
import { CASE_STORE as SQLITE_CASE } from '../../src/adapters/sqlite/case-store.js';
import type { SqlDatabase } from '../../src/adapters/sqlite/driver.js';
import { runCli, runCliConcurrently } from '../support/cli.js';
import { POSTGRES_URL, testSchema } from '../support/postgres.js';
import {
  PREVIOUS,
  PREVIOUS_RELEASE,
  PREVIOUS_SQLITE_CONNECTION,
  type PreviousStatement,
} from '../support/previous-release.js';
import { documentedRollback, type SqliteCommand } from '../support/rollback.js';
import { openSqlite } from '../support/sqlite.js';

/**
 * An upgrade from the previous release, as an operator makes it (docs/operations/upgrading.md):
 * stores built by that release's own statements, an instance of it reading (and noting the
 * certificates it sees) throughout, `case-read stores migrate` run from two processes at once
 * meanwhile; then every statement of that release against the migrated stores, this release's
 * CLI on them, and the documented way back. Nothing may fail.
 */

type Store = PreviousStatement['store'];
const STORES: readonly Store[] = ['case store', 'access store', 'audit store'];

/** Each store's migrations in this release, by engine: its version is their count. */
const THIS_RELEASE: Record<
  keyof typeof PREVIOUS,
  Record<Store, { readonly migrations: readonly string[] }>
> = {
  postgres: { 'case store': POSTGRES_CASE, 'access store': POSTGRES_ACCESS, 'audit store': POSTGRES_AUDIT },
  sqlite: { 'case store': SQLITE_CASE, 'access store': SQLITE_ACCESS, 'audit store': SQLITE_AUDIT },
};

interface Versions {
  readonly store: Store;
  /** Its version in the previous release: the count of that release's migrations of it. */
  readonly previous: number;
  /** Its version in this release: the count of this release's migrations of it. */
  readonly current: number;
}

/** Every store's version in the previous release and in this one, worked out from the two releases' migration lists. */
const versionsOf = (engine: keyof typeof PREVIOUS): Versions[] =>
  STORES.map((store) => ({
    store,
    previous: PREVIOUS[engine].migrations[store].length,
    current: THIS_RELEASE[engine][store].migrations.length,
  }));

/** The way back, as docs/operations/upgrading.md#rolling-back gives it. */
const ROLLBACK = documentedRollback();

/** The store a documented set-back statement names, and the version it sets. */
const SET_BACK = /^UPDATE case_read_schema SET version = (\d+) WHERE store = '([a-z ]+)'$/;

/**
 * The stores whose version the documented way back leaves newer than the previous release's
 * and which must be set back to this release's before upgrading again, as upgrading.md says
 * ("To upgrade again later…"): their columns and tables stayed, so their migrations cannot run
 * a second time. Read from its PostgreSQL statements; each must set this release's version.
 */
const SET_BACK_BEFORE_UPGRADING_AGAIN: readonly Store[] = ROLLBACK.setBack.postgres.map((statement) => {
  const [, version, store] = SET_BACK.exec(statement) ?? [];
  const named = STORES.find((candidate) => candidate === store);
  if (named === undefined) throw new Error(`upgrading.md: a set-back statement names no store: ${statement}`);
  if (Number(version) !== THIS_RELEASE.postgres[named].migrations.length) {
    throw new Error(
      `upgrading.md sets the ${named} back to version ${version} before upgrading again; this release's is ${THIS_RELEASE.postgres[named].migrations.length}`,
    );
  }
  return named;
});

/**
 * Why a store the documented way back left at `found` fails: the way back (the document's
 * statements, run as the operator runs them) does not bring it to the previous release's
 * version.
 */
const notRolledBack = ({ store, previous, current }: Versions, found: unknown) =>
  `${store}: the previous release's version is ${previous} (this release's ${current}), and the documented ` +
  `way back left it at ${String(found)}: add its rollback statements to ` +
  'docs/operations/upgrading.md#rolling-back (this test runs them from there)';

/**
 * What `stores migrate` says of each store when it upgrades again after the way back: a store
 * that changed is migrated from the previous release's version again, unless it was set back
 * to this release's first; every other store is current.
 */
function upgradedAgain(versions: readonly Versions[]): RegExp[] {
  return versions.map(({ store, previous, current }) =>
    previous !== current && !SET_BACK_BEFORE_UPGRADING_AGAIN.includes(store)
      ? new RegExp(`^${store} .*: version ${previous} -> ${current}, migrated$`, 'm')
      : new RegExp(`^${store} .*: version ${current}, current \\(nothing to do\\)$`, 'm'),
  );
}

/** What an instance of the previous release runs over and over while it serves. */
const servesRepeatedly = (s: PreviousStatement) => s.kind === 'read' || s.what.includes('(noteCertificate)');

/** A statement of the previous release that failed, and when. */
interface Failure {
  readonly what: string;
  readonly error: string;
}

/**
 * Runs `run` over each of `statements` until `stop()` says so, yielding to the event loop
 * between statements; counts those that ran while `during()` was true, and keeps every failure.
 */
async function keepServing(
  statements: readonly PreviousStatement[],
  run: (statement: PreviousStatement) => Promise<unknown> | unknown,
  flags: { stop: () => boolean; during: () => boolean },
): Promise<{ ranDuring: number; failures: Failure[] }> {
  let ranDuring = 0;
  const failures: Failure[] = [];
  while (!flags.stop()) {
    for (const statement of statements) {
      const during = flags.during();
      try {
        await run(statement);
        if (during) ranDuring++;
      } catch (error) {
        failures.push({ what: statement.what, error: (error as Error).message });
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return { ranDuring, failures };
}

/** `stores migrate` from two processes at once, while `serving` runs; resolves when both have exited. */
async function migrateTwiceAtOnce(env: Record<string, string>, migrating: { on: boolean }) {
  migrating.on = true;
  try {
    return await Promise.all([0, 1].map(() => runCliConcurrently(['stores', 'migrate', '--json'], env)));
  } finally {
    migrating.on = false;
  }
}

interface Reported {
  readonly store: string;
  readonly outcome: string;
  readonly before: number;
  readonly after: number;
}

/** Each store's outcome as the two runs reported it: one migrated what was behind, the other found it current. */
function outcomesOf(runs: readonly { status: number | null; stdout: string; stderr: string }[]) {
  return runs.map((run) => {
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    return (JSON.parse(run.stdout) as { stores: Reported[] }).stores;
  });
}

/**
 * What the two runs of `stores migrate` must have said of each store, ordered as
 * {@link reportedOf} orders them: a store whose version changed was migrated from the previous
 * release's version to this release's by one run and found current by the other; a store
 * that did not change was found current by both.
 */
const expectedOutcomes = (versions: readonly Versions[]) =>
  versions.map(({ store, previous, current }) => {
    const found = {
      store,
      url: expect.any(String),
      outcome: 'current',
      before: current,
      after: current,
      current,
    };
    return previous === current
      ? [found, found]
      : [
          { store, url: expect.any(String), outcome: 'migrated', before: previous, after: current, current },
          found,
        ];
  });

/** Each store's reports from the two runs, the migration first: in the order of {@link expectedOutcomes}. */
const reportedOf = (runs: readonly (readonly Reported[])[], versions: readonly Versions[]) =>
  versions.map(({ store }) =>
    runs
      .flatMap((run) => run.filter((r) => r.store === store))
      .sort((a, b) => Number(b.outcome === 'migrated') - Number(a.outcome === 'migrated')),
  );

describe(`an upgrade from the previous release (${PREVIOUS_RELEASE}) on PostgreSQL`, () => {
  const engine = PREVIOUS.postgres;
  const versions = versionsOf('postgres');
  const schema = testSchema('upgrade');
  afterAll(() => schema.drop());

  it('stores migrate under an instance of the previous release: none of its statements fails, during or after', async () => {
    await schema.query(`CREATE SCHEMA ${schema.name}`);
    for (const store of STORES) for (const sql of engine.migrations[store]) await schema.query(sql);
    for (const s of engine.seed) await schema.query(s.sql, [...s.params]);

    // The previous release's pool: its own connections, the schema on the search path.
    const old = new pg.Pool({
      connectionString: POSTGRES_URL,
      max: 2,
      options: `-c search_path=${schema.name}`,
    });
    try {
      const migrating = { on: false };
      let stopped = false;
      const serving = [0, 1].map(() =>
        keepServing(engine.statements.filter(servesRepeatedly), (s) => old.query(s.sql, [...s.params]), {
          stop: () => stopped,
          during: () => migrating.on,
        }),
      );
      const runs = await migrateTwiceAtOnce(
        { CASE_STORE: schema.url, ACCESS_STORE: schema.url, AUDIT_STORE: schema.url },
        migrating,
      );
      stopped = true;
      const served = await Promise.all(serving);
      expect(served.flatMap((s) => s.failures)).toEqual([]);
      expect(served.reduce((n, s) => n + s.ranDuring, 0)).toBeGreaterThan(0);

      // Each store this release changed was behind: one run migrated it, the other found it current.
      expect(reportedOf(outcomesOf(runs), versions)).toEqual(expectedOutcomes(versions));

      // Every statement of the previous release, once, in order, on the migrated stores.
      for (const s of engine.statements) {
        await expect(old.query(s.sql, [...s.params]), s.what).resolves.toBeDefined();
      }
    } finally {
      await old.end();
    }

    // This release on the stores the two releases wrote: the mixed trail verifies.
    const env = { ACCESS_STORE: schema.url, AUDIT_STORE: schema.url };
    const verify = runCli(['audit', 'verify'], env);
    expect(verify.stderr).toBe('');
    expect(verify.stdout).toMatch(/^audit chain intact: 4 record\(s\)/);
    expect(runCli(['clients', 'show', 'old-client'], env).status).toBe(0);
  });

  it('the documented way back: the previous release finds its versions and its statements work; migrating again works', async () => {
    // docs/operations/upgrading.md#rolling-back, PostgreSQL, as the document gives it.
    await schema.query(ROLLBACK.postgres);
    // The previous release's start-up: each store at exactly its version (the audit store at most).
    const recorded = (await schema.query('SELECT store, version FROM case_read_schema ORDER BY store'))
      .rows as { store: string; version: number }[];
    expect(recorded.map((row) => row.store)).toEqual([...STORES].sort());
    for (const store of versions) {
      const found = recorded.find((row) => row.store === store.store)?.version;
      expect(found, notRolledBack(store, found)).toBe(store.previous);
    }
    for (const s of engine.statements.filter(servesRepeatedly)) {
      await expect(schema.query(s.sql, [...s.params]), s.what).resolves.toBeDefined();
    }
    // Upgrading again: the audit store's columns, tree, notes and archive boundary stayed, so its version is set back first.
    for (const statement of ROLLBACK.setBack.postgres) await schema.query(statement);
    const again = runCli(['stores', 'migrate'], {
      CASE_STORE: schema.url,
      ACCESS_STORE: schema.url,
      AUDIT_STORE: schema.url,
    });
    expect(again.stderr).toBe('');
    for (const line of upgradedAgain(versions)) expect(again.stdout).toMatch(line);
    expect(runCli(['audit', 'verify'], { AUDIT_STORE: schema.url }).stdout).toMatch(
      /^audit chain intact: 4 record/,
    );
  });
});

describe(`an upgrade from the previous release (${PREVIOUS_RELEASE}) on SQLite`, () => {
  const engine = PREVIOUS.sqlite;
  const versions = versionsOf('sqlite');
  const dir = mkdtempSync(join(tmpdir(), 'case-read-upgrade-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<Store, string> = {
    'case store': join(dir, 'cases.db'),
    'access store': join(dir, 'access.db'),
    'audit store': join(dir, 'audit.db'),
  };
  const env = {
    CASE_STORE: `sqlite:${files['case store']}`,
    ACCESS_STORE: `sqlite:${files['access store']}`,
    AUDIT_STORE: `sqlite:${files['audit store']}`,
  };

  /** A connection as the previous release opened one: read-only to serve, else its writer's pragmas. */
  const connect = (store: Store, readonly: boolean): SqlDatabase => {
    const db = openSqlite(files[store], { readonly });
    if (!readonly) db.exec(PREVIOUS_SQLITE_CONNECTION);
    return db;
  };
  /** The store whose file upgrading.md's `data/FILE` names (the same names as `files` here). */
  const storeOfFile = (file: string): Store => {
    const store = STORES.find((candidate) => basename(files[candidate]) === file);
    if (store === undefined) throw new Error(`upgrading.md names data/${file}, which is no store's file`);
    return store;
  };
  /** One documented `sqlite3 data/FILE.db "SQL"`, on that store's file here. */
  const runSqlite = (command: SqliteCommand) => {
    const db = connect(storeOfFile(command.file), false);
    try {
      db.exec(command.sql);
    } finally {
      db.close();
    }
  };
  const runOn = (db: SqlDatabase, s: PreviousStatement) => {
    const statement = db.prepare<unknown[], unknown>(s.sql);
    return s.kind === 'read' ? statement.all(...s.params) : statement.run(...s.params);
  };

  it('stores migrate under an instance of the previous release: none of its statements fails, during or after', async () => {
    for (const store of STORES) {
      const db = connect(store, false);
      for (const sql of engine.migrations[store]) db.exec(sql);
      for (const s of engine.seed.filter((s) => s.store === store)) runOn(db, s);
      db.close();
    }
    // The previous release serving: its read-only connections, opened before the migration,
    // and the connection it notes certificates through.
    const readers = Object.fromEntries(STORES.map((store) => [store, connect(store, true)])) as Record<
      Store,
      SqlDatabase
    >;
    const notes = connect('access store', false);
    try {
      const migrating = { on: false };
      let stopped = false;
      const serving = keepServing(
        engine.statements.filter(servesRepeatedly),
        (s) => runOn(s.kind === 'read' ? readers[s.store] : notes, s),
        { stop: () => stopped, during: () => migrating.on },
      );
      const runs = await migrateTwiceAtOnce(env, migrating);
      stopped = true;
      const served = await serving;
      expect(served.failures).toEqual([]);
      expect(served.ranDuring).toBeGreaterThan(0);
      // Each store this release changed was behind: one run migrated it, the other found it current.
      expect(reportedOf(outcomesOf(runs), versions)).toEqual(expectedOutcomes(versions));
    } finally {
      for (const db of Object.values(readers)) db.close();
      notes.close();
    }

    for (const store of STORES) {
      const db = connect(store, false);
      try {
        for (const s of engine.statements.filter((s) => s.store === store)) {
          expect(() => runOn(db, s), s.what).not.toThrow();
        }
      } finally {
        db.close();
      }
    }
    const verify = runCli(['audit', 'verify'], env);
    expect(verify.stderr).toBe('');
    expect(verify.stdout).toMatch(/^audit chain intact: 4 record\(s\)/);
    expect(runCli(['clients', 'show', 'old-client'], env).status).toBe(0);
  });

  it('the documented way back: the previous release finds its versions and its statements work; migrating again works', () => {
    // docs/operations/upgrading.md#rolling-back, SQLite, as the document gives it.
    for (const command of ROLLBACK.sqlite) runSqlite(command);
    for (const versionsOfStore of versions) {
      const { store } = versionsOfStore;
      const db = connect(store, true);
      try {
        const found = db.prepare<[], { user_version: number }>('PRAGMA user_version').get()?.user_version;
        expect(found, notRolledBack(versionsOfStore, found)).toBe(versionsOfStore.previous);
        for (const s of engine.statements.filter((s) => s.store === store && s.kind === 'read')) {
          expect(() => runOn(db, s), s.what).not.toThrow();
        }
      } finally {
        db.close();
      }
    }
    // Upgrading again: the audit store's version is set back first, as on PostgreSQL.
    expect(ROLLBACK.setBack.sqlite.map((command) => storeOfFile(command.file))).toEqual(
      SET_BACK_BEFORE_UPGRADING_AGAIN,
    );
    for (const command of ROLLBACK.setBack.sqlite) {
      expect(command.sql, `upgrading.md sets the ${storeOfFile(command.file)} back`).toBe(
        `PRAGMA user_version = ${THIS_RELEASE.sqlite[storeOfFile(command.file)].migrations.length}`,
      );
      runSqlite(command);
    }
    const migrated = runCli(['stores', 'migrate'], env);
    expect(migrated.stderr).toBe('');
    for (const line of upgradedAgain(versions)) expect(migrated.stdout).toMatch(line);
    expect(runCli(['audit', 'verify'], env).stdout).toMatch(/^audit chain intact: 4 record/);
  });
});
