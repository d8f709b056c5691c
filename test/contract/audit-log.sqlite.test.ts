import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteAuditLog } from '../../src/adapters/sqlite/audit-log.js';
import { execOn } from '../support/sqlite.js';
import { describeAuditLogContract, tamperSql } from './audit-log.contract.js';

describeAuditLogContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-audit-contract-'));
  const path = join(dir, 'audit.db');
  const exec = async (sql: string) => execOn(path, sql);
  return {
    open: async () => {
      const log = SqliteAuditLog.open(path);
      return { log, close: async () => log.close() };
    },
    tamper: (change) => exec(tamperSql(change)),
    refuseWrites: () =>
      exec("CREATE TRIGGER refuse BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk full'); END"),
    allowWrites: () => exec('DROP TRIGGER refuse'),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
