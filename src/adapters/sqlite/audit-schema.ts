// The SQLite audit store's schema: its tables as ordered migrations, and the store as
// database.ts opens and migrates it (its name, what creates it, its own error).
import * as chain from '../shared/audit-chain.js';
import * as retention from '../shared/audit-retention.js';
import * as tree from '../shared/audit-tree.js';
import * as witnesses from '../shared/audit-witnesses.js';
import { archiveLeaseSql } from './archive-lease.js';
import { sqliteStore } from './database.js';

/** Times as ISO 8601 text, which sorts as time does. */
const MIGRATIONS: readonly string[] = [
  chain.auditTableSql({ seq: 'INTEGER', at: 'TEXT' }),
  chain.auditVersion2Sql,
  chain.auditCheckpointsSql({ seq: 'INTEGER' }),
  chain.auditVersion3Sql,
  tree.auditTreeSql({ seq: 'INTEGER', bytes: 'BLOB' }),
  retention.auditArchivedSql({ seq: 'INTEGER', bytes: 'BLOB' }),
  archiveLeaseSql,
  witnesses.auditWitnessesSql({ size: 'INTEGER' }),
  chain.auditContinuationSql,
];

export const AUDIT_STORE = sqliteStore('audit store', MIGRATIONS, {
  usableFrom: 4,
  createHint: 'case-read serve (it creates the audit store)',
  // Pages freed by letting go of archived records go back to the disk (decisions §15).
  incrementalVacuum: true,
});
