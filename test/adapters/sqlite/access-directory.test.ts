import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteAccessAdministration } from '../../../src/adapters/sqlite/access-administration.js';
import { SqliteAccessDirectory } from '../../../src/adapters/sqlite/access-directory.js';
import { ACCESS_STORE } from '../../../src/adapters/sqlite/access-schema.js';
import { openSqlite, pragma } from '../../support/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-sqlite-access-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQLite access store, version 1 (before data minimisation) to 5', () => {
  it('serve refuses a version-1 store naming the command that migrates it; any operator command migrates it, keeping every client, withholding nothing', () => {
    const path = join(dir, 'v1.db');
    const db = openSqlite(path, { readonly: false });
    db.exec(ACCESS_STORE.migrations[0] as string);
    db.exec(
      "INSERT INTO clients (id, permissions, suspended) VALUES ('client-a', 'getCase,getRiskScores', 0); PRAGMA user_version = 1",
    );
    db.close();
    expect(() => SqliteAccessDirectory.openReadOnly(path)).toThrow(
      new RegExp(
        `schema version 1, this release needs ${ACCESS_STORE.migrations.length}; migrate it with: case-read stores migrate`,
      ),
    );
    const admin = SqliteAccessAdministration.open(path);
    admin.close();
    const migrated = openSqlite(path, { readonly: true });
    expect(pragma(migrated, 'user_version')).toBe(ACCESS_STORE.migrations.length);
    migrated.close();
    const reader = SqliteAccessDirectory.openReadOnly(path);
    return reader.findClient('client-a').then((client) => {
      expect(client?.permissions).toEqual(['getCase', 'getRiskScores']);
      expect(client?.redact).toEqual([]);
      expect(client?.limitedAccess).toBe('deny');
      reader.close();
    });
  });
});

describe('a stored field to withhold that this version does not know', () => {
  it('fails closed: the client is not read (so not served), never answered in full', async () => {
    const path = join(dir, 'unknown-field.db');
    SqliteAccessAdministration.open(path).close();
    const db = openSqlite(path, { readonly: false });
    db.exec(
      "INSERT INTO clients (id, permissions, suspended, redact) VALUES ('client-a', 'getCase', 0, 'disabilities,dateOfBirth')",
    );
    db.close();
    const reader = SqliteAccessDirectory.openReadOnly(path);
    try {
      // The request path answers 503 (store unavailable), whatever the client asked for.
      await expect(reader.findClient('client-a')).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        store: 'access store',
      });
    } finally {
      reader.close();
    }
  });
});
