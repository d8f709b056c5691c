import type {
  AuditQuery,
  AuditRecord,
  AuditVerification,
  StoredAuditRecord,
} from '../../domain/audit/record.js';
import type { AuditLog } from '../../ports/audit-log.js';
import { StoreError } from '../../ports/stores.js';
import {
  AUDIT_COLUMNS,
  type AuditRow,
  auditQuerySql,
  type ChainHead,
  EMPTY_CHAIN,
  linkRecords,
  recordOfRow,
  rowValuesOf,
  verifyByPages,
  verifyPageSql,
} from '../shared/audit-chain.js';
import { GroupCommit } from '../shared/group-commit.js';
import { openWritableStore, type StoreDescription, transaction } from './database.js';
import type { SqlDatabase, SqliteDriver } from './driver.js';

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE audit (
    seq                 INTEGER PRIMARY KEY,
    at                  TEXT NOT NULL,
    request_id          TEXT NOT NULL,
    client_id           TEXT NOT NULL,
    certificate_serial  TEXT NOT NULL,
    on_behalf_of        TEXT,
    operation           TEXT NOT NULL,
    crn                 TEXT,
    status              INTEGER NOT NULL,
    previous_hash       TEXT NOT NULL,
    hash                TEXT NOT NULL
  );
  CREATE INDEX audit_by_client ON audit (client_id, at);
  CREATE INDEX audit_by_crn ON audit (crn, at) WHERE crn IS NOT NULL;
  `,
];

export class AuditStoreError extends StoreError {
  override readonly name = 'AuditStoreError';
}

const AUDIT_STORE: StoreDescription = {
  what: 'audit store',
  migrations: MIGRATIONS,
  createHint: 'case-read serve (it creates the audit store)',
  error: (message) => new AuditStoreError(message),
};

/**
 * The audit trail in a SQLite file (`AUDIT_STORE=sqlite:PATH`).
 *
 * Group commit: records appended in the same event-loop turn are written in one
 * transaction at the end of the turn, and each `append` resolves only once its record is
 * committed, so the service still answers nothing before it is recorded. Under load one
 * commit carries many records instead of each request paying for its own. WAL with
 * synchronous=NORMAL: a commit survives the process dying; an operating-system crash can
 * lose the last moments.
 *
 * Several processes on one machine may share the file: each batch takes SQLite's write lock
 * (BEGIN IMMEDIATE) and reads the chain head inside that transaction, so a writer that was
 * not first links onto the other's last record instead of colliding with it. (Across
 * machines use PostgreSQL: a SQLite file is not to be shared over a network file system.)
 */
export class SqliteAuditLog implements AuditLog {
  private readonly commits: GroupCommit<AuditRecord>;

  private constructor(private readonly db: SqlDatabase) {
    const insert = db.prepare<unknown[]>(
      `INSERT INTO audit (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`,
    );
    const head = db.prepare<[], ChainHead>('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1');
    // IMMEDIATE: the write lock is taken before the head is read, so no other writer can
    // append between the read and the inserts.
    this.commits = new GroupCommit((batch) =>
      transaction(
        db,
        () => {
          for (const stored of linkRecords(batch, head.get() ?? EMPTY_CHAIN).stored) {
            insert.run(...rowValuesOf(stored));
          }
        },
        'immediate',
      ),
    );
  }

  static open(path: string, driver?: SqliteDriver): SqliteAuditLog {
    return new SqliteAuditLog(openWritableStore(path, AUDIT_STORE, driver));
  }

  append(record: AuditRecord): Promise<void> {
    return this.commits.append(record);
  }

  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    const { text, values } = auditQuerySql(filter, () => '?');
    return this.db
      .prepare<unknown[], AuditRow>(text)
      .all(...values)
      .map(recordOfRow);
  }

  /** Walks the chain a page at a time, by sequence number. */
  async verify(): Promise<AuditVerification> {
    const page = this.db.prepare<[number, number], AuditRow>(verifyPageSql(() => '?'));
    return verifyByPages((after, limit) => page.all(after, limit));
  }

  /** For readiness: throws when the store cannot be written (a write lock can be taken). */
  async ping(): Promise<void> {
    this.db.exec('BEGIN IMMEDIATE; ROLLBACK');
  }

  /** Writes anything still pending, then closes. */
  close(): void {
    this.commits.flushNow();
    this.db.close();
  }
}
