import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteAccessAdministration } from '../../src/adapters/sqlite/access-administration.js';
import { SqliteAccessDirectory } from '../../src/adapters/sqlite/access-directory.js';
import { BUSY_TIMEOUT_MS, sqliteDriver } from '../../src/adapters/sqlite/driver.js';
import { describeAccessDirectoryContract } from './access-directory.contract.js';
import { otherOperator } from './access-directory.other-operator.js';

describeAccessDirectoryContract('sqlite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-access-'));
  const path = join(dir, 'access.db');
  const admin = SqliteAccessAdministration.open(path);
  // The service reads through its own read-only connection, as `serve` does.
  let reader = SqliteAccessDirectory.openReadOnly(path);
  // Other operators' connections to the same file, as their CLI processes would open.
  const others: SqliteAccessAdministration[] = [];
  return {
    admin,
    reader,
    another: () => {
      const other = SqliteAccessAdministration.open(path);
      others.push(other);
      return other;
    },
    otherOperator: () =>
      otherOperator({ engine: 'sqlite', path, driver: sqliteDriver().name, busyTimeoutMs: BUSY_TIMEOUT_MS }),
    reopen: () => {
      reader.close();
      reader = SqliteAccessDirectory.openReadOnly(path);
      return reader;
    },
    close: () => {
      reader.close();
      for (const other of others) other.close();
      admin.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
