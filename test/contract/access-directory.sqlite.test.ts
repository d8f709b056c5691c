import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteAccessAdministration } from '../../src/adapters/sqlite/access-administration.js';
import { SqliteAccessDirectory } from '../../src/adapters/sqlite/access-directory.js';
import { describeAccessDirectoryContract } from './access-directory.contract.js';

describeAccessDirectoryContract('sqlite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-access-'));
  const path = join(dir, 'access.db');
  const admin = SqliteAccessAdministration.open(path);
  // The service reads through its own read-only connection, as `serve` does.
  let reader = SqliteAccessDirectory.openReadOnly(path);
  return {
    admin,
    reader,
    reopen: () => {
      reader.close();
      reader = SqliteAccessDirectory.openReadOnly(path);
      return reader;
    },
    close: () => {
      reader.close();
      admin.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
