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

describe('the SQLite access store, version 1 (before data minimisation) to 2', () => {
  it('serve refuses a version-1 store naming the command that migrates it; any operator command migrates it, keeping every client, withholding nothing', () => {
    const path = join(dir, 'v1.db');
    const db = openSqlite(path, { readonly: false });
    db.exec(ACCESS_STORE.migrations[0] as string);
    db.exec(
      "INSERT INTO clients (id, permissions, suspended) VALUES ('client-a', 'getCase,getRiskScores', 0); PRAGMA user_version = 1",
    );
    db.close();
    expect(() => SqliteAccessDirectory.openReadOnly(path)).toThrow(
      /schema version 1, this service needs 2; run case-read clients add .* against it to migrate/,
    );
    const admin = SqliteAccessAdministration.open(path);
    admin.close();
    const migrated = openSqlite(path, { readonly: true });
    expect(pragma(migrated, 'user_version')).toBe(2);
    migrated.close();
    const reader = SqliteAccessDirectory.openReadOnly(path);
    return reader.findClient('client-a').then((client) => {
      expect(client?.permissions).toEqual(['getCase', 'getRiskScores']);
      expect(client?.redact).toEqual([]);
      reader.close();
    });
  });
});
