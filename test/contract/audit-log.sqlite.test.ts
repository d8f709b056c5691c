import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointValuesOf } from '../../src/adapters/shared/audit-chain.js';
import { AUDIT_STORE, SqliteAuditLog } from '../../src/adapters/sqlite/audit-log.js';
import { sqliteStores } from '../../src/adapters/sqlite/store-kind.js';
import { execOn, openSqlite } from '../support/sqlite.js';
import { testContext } from '../support/stores.js';
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
    previous: {
      // The file as the release before left it: every migration but the last, and its version.
      build: async (checkpoint) => {
        const db = openSqlite(path);
        try {
          for (const migration of AUDIT_STORE.migrations.slice(0, -1)) db.exec(migration);
          db.exec(`PRAGMA user_version = ${AUDIT_STORE.migrations.length - 1}`);
          db.prepare(
            'INSERT INTO audit_checkpoints (seq, head, time, key_id, signature, note) VALUES (?, ?, ?, ?, ?, ?)',
          ).run(...checkpointValuesOf(checkpoint));
        } finally {
          db.close();
        }
      },
      migrate: async () => {
        const migrated = await sqliteStores.audit?.migrate?.(`sqlite:${path}`, testContext);
        if (migrated === undefined) throw new Error('the sqlite kind migrates no audit store');
        return migrated;
      },
    },
  };
});
