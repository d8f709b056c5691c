import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import {
  type AuditQuery,
  type AuditRecord,
  type AuditVerification,
  chainRecord,
  GENESIS_HASH,
  type StoredAuditRecord,
  verifyAuditChain,
} from '../../domain/audit/record.js';
import type { AuditLog } from '../../ports/audit-log.js';
import { openWritableStore, type StoreDescription } from './database.js';

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

export class AuditStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuditStoreError';
  }
}

const AUDIT_STORE: StoreDescription = {
  what: 'audit store',
  migrations: MIGRATIONS,
  createHint: 'case-read serve (it creates the audit store)',
  error: (message) => new AuditStoreError(message),
};

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface Row {
  seq: number;
  at: string;
  request_id: string;
  client_id: string;
  certificate_serial: string;
  on_behalf_of: string | null;
  operation: string;
  crn: string | null;
  status: number;
  previous_hash: string;
  hash: string;
}

const toRecord = (r: Row): StoredAuditRecord => ({
  seq: r.seq,
  at: new Date(r.at),
  requestId: r.request_id,
  clientId: r.client_id,
  certificateSerial: r.certificate_serial,
  onBehalfOf: r.on_behalf_of,
  operation: r.operation,
  crn: r.crn,
  status: r.status,
  previousHash: r.previous_hash,
  hash: r.hash,
});

/**
 * The audit trail in a SQLite file (`AUDIT_STORE=sqlite:PATH`).
 *
 * Group commit: records appended in the same event-loop turn are written in one
 * transaction at the end of the turn, and each `append` resolves only once its record is
 * committed, so the service still answers nothing before it is recorded. Under load one
 * commit carries many records instead of each request paying for its own. WAL with
 * synchronous=NORMAL: a commit survives the process dying; an operating-system crash can
 * lose the last moments. The service is the only writer; the chain head is kept in memory
 * and re-read at open.
 */
export class SqliteAuditLog implements AuditLog {
  private readonly insert: Database.Statement<unknown[]>;
  private seq: number;
  private head: string;
  private pending: { record: AuditRecord; resolve: () => void; reject: (error: unknown) => void }[] = [];

  private constructor(private readonly db: Database.Database) {
    this.insert = db.prepare(
      `INSERT INTO audit (seq, at, request_id, client_id, certificate_serial, on_behalf_of, operation, crn, status, previous_hash, hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const last = db
      .prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1')
      .get();
    this.seq = last?.seq ?? 0;
    this.head = last?.hash ?? GENESIS_HASH;
  }

  static open(path: string): SqliteAuditLog {
    return new SqliteAuditLog(openWritableStore(path, AUDIT_STORE));
  }

  append(record: AuditRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ record, resolve, reject });
    });
  }

  /** Writes every pending record in one transaction, then settles each append. */
  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    let seq = this.seq;
    let head = this.head;
    try {
      this.db.transaction(() => {
        for (const { record } of batch) {
          const stored = chainRecord(record, seq + 1, head, sha256);
          this.insertOne(stored);
          seq = stored.seq;
          head = stored.hash;
        }
      })();
    } catch (error) {
      // Nothing of the batch was committed: the chain head stays where it was.
      for (const { reject } of batch) reject(error);
      return;
    }
    this.seq = seq;
    this.head = head;
    for (const { resolve } of batch) resolve();
  }

  private insertOne(stored: StoredAuditRecord): void {
    this.insert.run(
      stored.seq,
      stored.at.toISOString(),
      stored.requestId,
      stored.clientId,
      stored.certificateSerial,
      stored.onBehalfOf,
      stored.operation,
      stored.crn,
      stored.status,
      stored.previousHash,
      stored.hash,
    );
  }

  query(filter: AuditQuery): StoredAuditRecord[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.clientId !== undefined) {
      where.push('client_id = ?');
      params.push(filter.clientId);
    }
    if (filter.crn !== undefined) {
      where.push('crn = ?');
      params.push(filter.crn);
    }
    if (filter.since !== undefined) {
      where.push('at >= ?');
      params.push(filter.since.toISOString());
    }
    params.push(filter.limit ?? 1000);
    return this.db
      .prepare<unknown[], Row>(
        `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq LIMIT ?`,
      )
      .all(...params)
      .map(toRecord);
  }

  verify(): AuditVerification {
    const rows = this.db.prepare<[], Row>('SELECT * FROM audit ORDER BY seq').iterate();
    function* records() {
      for (const row of rows) yield toRecord(row);
    }
    return verifyAuditChain(records(), sha256);
  }

  /** For readiness: throws when the store cannot be written (a write lock can be taken). */
  ping(): void {
    this.db.exec('BEGIN IMMEDIATE; ROLLBACK');
  }

  /** Writes anything still pending, then closes. */
  close(): void {
    if (this.pending.length > 0) this.flush();
    this.db.close();
  }
}
