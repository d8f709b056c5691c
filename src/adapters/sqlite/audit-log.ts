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
 * The audit trail in a SQLite file (`AUDIT_STORE=sqlite:PATH`). Each append is its own
 * committed transaction before the response is sent (WAL, synchronous=NORMAL: it survives
 * the process dying; an operating-system crash can lose the last moments). The service is
 * the only writer; the chain head is kept in memory and re-read at open.
 */
export class SqliteAuditLog implements AuditLog {
  private readonly insert: Database.Statement<unknown[]>;
  private seq: number;
  private head: string;

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

  append(record: AuditRecord): void {
    const stored = chainRecord(record, this.seq + 1, this.head, sha256);
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
    this.seq = stored.seq;
    this.head = stored.hash;
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

  close(): void {
    this.db.close();
  }
}
