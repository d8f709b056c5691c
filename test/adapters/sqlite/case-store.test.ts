import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CASE_STORE_MIGRATIONS } from '../../../src/adapters/sqlite/case-schema.js';
import {
  CASE_STORE,
  SqliteCaseRepository,
  SqliteCaseWriter,
} from '../../../src/adapters/sqlite/case-store.js';
import { openReadOnlyStore, openWritableStore } from '../../../src/adapters/sqlite/database.js';
import type { SqlDatabase } from '../../../src/adapters/sqlite/driver.js';
import { Crn } from '../../../src/domain/crn.js';
import { StoreUnavailableError } from '../../../src/domain/errors.js';
import type { CaseRecord } from '../../../src/domain/types.js';
import { UnreadableRecordError } from '../../../src/ports/store-errors.js';
import { StoreError } from '../../../src/ports/stores.js';
import { CaseMother } from '../../support/mothers.js';
import { openSqlite, pragma } from '../../support/sqlite.js';

const CASE_STORE_SCHEMA_VERSION = CASE_STORE_MIGRATIONS.length;
const dir = mkdtempSync(join(tmpdir(), 'case-read-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => join(dir, `cases-${++n}.db`);

function storeWith(records: CaseRecord[]): string {
  const path = freshPath();
  const writer = SqliteCaseWriter.open(path);
  writer.write(records);
  writer.close();
  return path;
}

describe('SqliteCaseWriter', () => {
  it('creates the schema at the current version, in WAL mode', () => {
    const path = storeWith([CaseMother.full()]);
    const db = openSqlite(path, { readonly: true });
    expect(pragma(db, 'user_version')).toBe(CASE_STORE_SCHEMA_VERSION);
    expect(pragma(db, 'journal_mode')).toBe('wal');
    db.close();
  });

  it('replaces a case re-imported under the same crn, children included', async () => {
    const path = storeWith([CaseMother.full('X123456')]);
    const writer = SqliteCaseWriter.open(path);
    writer.write([CaseMother.minimal('X123456')]);
    expect(writer.count()).toBe(1);
    writer.close();
    const repo = SqliteCaseRepository.openReadOnly(path);
    expect((await repo.findPersonalDetails(Crn.parse('X123456')))?.value).toStrictEqual(
      CaseMother.minimal().personalDetails,
    );
    expect(
      (await repo.findCommunityManager(Crn.parse('X123456')))?.value.communityManager?.name.surname,
    ).toBe('Minimal');
    repo.close();
  });

  it('writes a batch whole or not at all', async () => {
    const path = storeWith([CaseMother.full('X123456')]);
    const writer = SqliteCaseWriter.open(path);
    const valid = { ...CaseMother.minimal('A000009'), homeOfficeInterest: { exists: true, notes: null } };
    // A manager row violating NOT NULL fails the batch after the first case was inserted.
    const invalid = {
      ...CaseMother.full('A000010'),
      communityManager: { ...CaseMother.fullManager(), pdu: null },
    } as never;
    expect(() => writer.write([valid, invalid])).toThrow(/NOT NULL/);
    expect(writer.count()).toBe(1);
    writer.close();
  });
});

describe('SqliteCaseRepository.openReadOnly', () => {
  it('refuses a missing file, saying how to create it', () => {
    const path = join(dir, 'nope.db');
    expect(() => SqliteCaseRepository.openReadOnly(path)).toThrow(StoreError);
    expect(() => SqliteCaseRepository.openReadOnly(path)).toThrow(
      /case-read cases import fixtures\/cases.json/,
    );
  });

  it('refuses a file that holds no store yet, saying how to create one', () => {
    const path = freshPath();
    openSqlite(path).close();
    expect(() => SqliteCaseRepository.openReadOnly(path)).toThrow(
      /holds no case store; create it with: case-read cases import/,
    );
  });

  it('refuses a store of the previous version, and a writer migrates it keeping every case', async () => {
    const path = freshPath();
    const v1 = openSqlite(path);
    v1.exec('PRAGMA journal_mode = WAL');
    v1.exec(CASE_STORE_MIGRATIONS[0] as string);
    v1.exec('PRAGMA user_version = 1');
    v1.prepare(
      "INSERT INTO cases (crn, home_office_interest_exists, home_office_interest_notes) VALUES ('X123456', 1, 'kept')",
    ).run();
    v1.close();
    expect(() => SqliteCaseRepository.openReadOnly(path)).toThrow(
      new RegExp(
        `schema version 1, this release needs ${CASE_STORE_SCHEMA_VERSION}; migrate it with: case-read stores migrate`,
      ),
    );
    SqliteCaseWriter.open(path).close();
    const repo = SqliteCaseRepository.openReadOnly(path);
    expect((await repo.findHomeOfficeInterest(Crn.parse('X123456')))?.value).toStrictEqual({
      exists: true,
      notes: 'kept',
    });
    expect((await repo.findRiskScores(Crn.parse('X123456')))?.value).toStrictEqual([]);
    // The document a read now returns as stored text was built by the migration.
    expect((await repo.findPersonalDetails(Crn.parse('X123456')))?.value).toStrictEqual({
      preferredLanguage: null,
      personalCircumstances: [],
      disabilities: [],
      offenderPersonalityDisorder: null,
    });
    repo.close();
  });

  it('opens read-only: the connection cannot write', () => {
    const path = storeWith([CaseMother.full()]);
    const repo = SqliteCaseRepository.openReadOnly(path);
    const db = (repo as unknown as { db: SqlDatabase }).db;
    expect(() => db.exec("DELETE FROM cases WHERE crn = 'X123456'")).toThrow(/readonly/);
    repo.close();
  });

  it('sees cases written after it opened (WAL readers are not blocked)', async () => {
    const path = storeWith([CaseMother.full('X123456')]);
    const repo = SqliteCaseRepository.openReadOnly(path);
    const writer = SqliteCaseWriter.open(path);
    writer.write([CaseMother.minimal('A000001')]);
    writer.close();
    expect((await repo.findHomeOfficeInterest(Crn.parse('A000001')))?.value).toStrictEqual({
      exists: false,
      notes: null,
    });
    repo.close();
  });

  it('reads of one event-loop turn share a snapshot; the next turn sees a write, and a writer is never held up', async () => {
    const path = storeWith([CaseMother.full('X123456')]);
    const repo = SqliteCaseRepository.openReadOnly(path);
    const a = Crn.parse('A000001');
    expect(await repo.findHomeOfficeInterest(a)).toBeUndefined();
    // Written while this turn's read transaction is open: the writer does not wait for it.
    const writer = SqliteCaseWriter.open(path);
    writer.write([CaseMother.minimal('A000001')]);
    writer.close();
    // Still the same turn (awaits resolve in microtasks): the same snapshot.
    expect(await repo.findHomeOfficeInterest(a)).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await repo.findHomeOfficeInterest(a))?.value).toStrictEqual({ exists: false, notes: null });
    repo.close();
  });
});

describe('SqliteCaseRepository reads through a memory map', () => {
  it('maps the file, and still reads what another process imports while it is open, the file grown past the map it began with', async () => {
    const path = storeWith([CaseMother.full('X123456')]);
    const repository = SqliteCaseRepository.openReadOnly(path);
    const opened = openReadOnlyStore(path, CASE_STORE);
    expect(Number(pragma(opened, 'mmap_size'))).toBeGreaterThan(0);
    opened.close();
    const writer = SqliteCaseWriter.open(path);
    // Enough cases, each with overflow pages, to grow the file many times over.
    const many = Array.from({ length: 400 }, (_, i) => CaseMother.full(`B${String(i).padStart(6, '0')}`));
    writer.write([...many, CaseMother.minimal('X123456')]);
    writer.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await repository.findPersonalDetails(Crn.parse('X123456')))?.value).toStrictEqual(
      CaseMother.minimal().personalDetails,
    );
    expect((await repository.findPersonalDetailsText(Crn.parse('B000399')))?.value).toBe(
      JSON.stringify(CaseMother.full().personalDetails),
    );
    repository.close();
  });
});

describe('a store a newer release migrated', () => {
  const next = (usableFrom: number) => ({
    ...CASE_STORE,
    migrations: [...CASE_STORE_MIGRATIONS, 'CREATE TABLE next_release_notes (id TEXT PRIMARY KEY)'],
    usableFrom,
  });

  it('is read as it is when it says this release can use it, and refused when it does not', async () => {
    const path = storeWith([CaseMother.minimal('X123456')]);
    openWritableStore(path, next(CASE_STORE_SCHEMA_VERSION)).close();
    const repository = SqliteCaseRepository.openReadOnly(path);
    expect((await repository.findHomeOfficeInterest(Crn.parse('X123456')))?.value).toBeDefined();
    repository.close();
    // This release's writer leaves it at the newer version.
    SqliteCaseWriter.open(path).close();
    const db = openSqlite(path, { readonly: true });
    expect(pragma(db, 'user_version')).toBe(CASE_STORE_SCHEMA_VERSION + 1);
    db.close();

    const stricter = storeWith([CaseMother.minimal('X123456')]);
    openWritableStore(stricter, next(CASE_STORE_SCHEMA_VERSION + 1)).close();
    expect(() => SqliteCaseRepository.openReadOnly(stricter)).toThrow(
      new RegExp(
        `is at schema version ${CASE_STORE_SCHEMA_VERSION + 1}, written by a newer release than this one \\(${CASE_STORE_SCHEMA_VERSION}\\), and it is usable from version ${CASE_STORE_SCHEMA_VERSION + 1}`,
      ),
    );
  });
});

describe('SqliteCaseWriter.open on a newer store', () => {
  it('refuses to touch a store from a newer version', () => {
    const path = freshPath();
    const db = openSqlite(path);
    db.exec(`PRAGMA user_version = ${CASE_STORE_SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => SqliteCaseWriter.open(path)).toThrow(
      new RegExp(
        `written by a newer release than this one \\(${CASE_STORE_SCHEMA_VERSION}\\), and it does not say which older releases can use it`,
      ),
    );
  });
});

describe('SqliteCaseRepository when the engine fails', () => {
  it('answers a StoreUnavailableError (503), never a raw driver error', async () => {
    const repository = SqliteCaseRepository.openReadOnly(storeWith([CaseMother.full('X123456')]));
    expect(await repository.findHomeOfficeInterest(Crn.parse('X123456'))).toBeDefined();
    repository.close();
    for (const read of [
      () => repository.findPersonalDetails(Crn.parse('X123456')),
      () => repository.findHomeOfficeInterest(Crn.parse('X123456')),
      () => repository.findCommunityManager(Crn.parse('X123456')),
      () => repository.findRiskScores(Crn.parse('X123456')),
    ]) {
      const error = await read().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error).toMatchObject({ store: 'case store' });
    }
  });
});

describe('SqliteCaseRepository on a record edited beside it', () => {
  it('refuses personal details that are not JSON, or JSON of another shape, as unreadable (a 500), not as an engine failure (a 503)', async () => {
    const path = storeWith([CaseMother.full('X123456'), CaseMother.full('X123457')]);
    const edit = openSqlite(path);
    edit
      .prepare('UPDATE cases SET personal_details_json = ? WHERE crn = ?')
      .run('{"preferredLang', 'X123456');
    edit.prepare('UPDATE cases SET personal_details_json = ? WHERE crn = ?').run('[1, 2]', 'X123457');
    edit.close();
    const repository = SqliteCaseRepository.openReadOnly(path);
    try {
      for (const [crn, reason] of [
        ['X123456', 'not JSON'],
        ['X123457', 'not an object'],
      ] as const) {
        const refused = await repository.findPersonalDetails(Crn.parse(crn)).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(UnreadableRecordError);
        expect(refused).toMatchObject({ store: 'case store', part: 'cases.personal_details_json', reason });
      }
      // The text path sends the text as stored: it refuses what is not JSON, or not an object.
      for (const crn of ['X123456', 'X123457']) {
        const text = await repository.findPersonalDetailsText(Crn.parse(crn)).catch((e: unknown) => e);
        expect(text).toBeInstanceOf(UnreadableRecordError);
      }
      // The other parts of the case are still read; the store is still up.
      expect((await repository.findHomeOfficeInterest(Crn.parse('X123456')))?.value.exists).toBe(true);
      expect(() => repository.ping()).not.toThrow();
    } finally {
      repository.close();
    }
  });
});
