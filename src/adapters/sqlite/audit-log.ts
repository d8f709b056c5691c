import {
  type AuditQuery,
  type AuditRecord,
  type AuditVerification,
  chainRecord,
  GENESIS_HASH,
  type StoredAuditRecord,
  verifyAuditBatches,
} from '../../domain/audit/record.js';
import type { AuditLog } from '../../ports/audit-log.js';
import { StoreError } from '../../ports/stores.js';
import { sha256Hex } from '../shared/sha256.js';
import { openWritableStore, type StoreDescription, transaction } from './database.js';
import type { SqlDatabase, SqliteDriver, SqlStatement } from './driver.js';

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

/** Records read per round trip by `verify`: memory stays constant whatever the chain's length. */
export const VERIFY_BATCH = 10_000;

const sha256 = sha256Hex;

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
 * lose the last moments.
 *
 * Several processes on one machine may share the file: each batch takes SQLite's write lock
 * (BEGIN IMMEDIATE) and reads the chain head inside that transaction, so a writer that was
 * not first links onto the other's last record instead of colliding with it. (Across
 * machines use PostgreSQL: a SQLite file is not to be shared over a network file system.)
 */
export class SqliteAuditLog implements AuditLog {
  private readonly insert: SqlStatement<unknown[]>;
  private readonly headStmt: SqlStatement<[], { seq: number; hash: string }>;
  private readonly writeBatch: (batch: readonly AuditRecord[]) => void;
  private pending: { record: AuditRecord; resolve: () => void; reject: (error: unknown) => void }[] = [];

  private constructor(private readonly db: SqlDatabase) {
    this.insert = db.prepare(
      `INSERT INTO audit (seq, at, request_id, client_id, certificate_serial, on_behalf_of, operation, crn, status, previous_hash, hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.headStmt = db.prepare('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1');
    // IMMEDIATE: the write lock is taken before the head is read, so no other writer can
    // append between the read and the inserts.
    this.writeBatch = (batch) =>
      transaction(
        db,
        () => {
          const last = this.headStmt.get();
          let seq = last?.seq ?? 0;
          let head = last?.hash ?? GENESIS_HASH;
          for (const record of batch) {
            const stored = chainRecord(record, seq + 1, head, sha256);
            this.insertOne(stored);
            seq = stored.seq;
            head = stored.hash;
          }
        },
        'immediate',
      );
  }

  static open(path: string, driver?: SqliteDriver): SqliteAuditLog {
    return new SqliteAuditLog(openWritableStore(path, AUDIT_STORE, driver));
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
    try {
      this.writeBatch(batch.map((p) => p.record));
    } catch (error) {
      // Nothing of the batch was committed.
      for (const { reject } of batch) reject(error);
      return;
    }
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

  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
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

  /** Walks the chain in batches of {@link VERIFY_BATCH}, by sequence number. */
  async verify(): Promise<AuditVerification> {
    const page = this.db.prepare<[number, number], Row>(
      'SELECT * FROM audit WHERE seq > ? ORDER BY seq LIMIT ?',
    );
    async function* batches() {
      let after = 0;
      for (;;) {
        const rows = page.all(after, VERIFY_BATCH);
        if (rows.length === 0) return;
        after = (rows.at(-1) as Row).seq;
        yield rows.map(toRecord);
        // Let the event loop breathe between batches.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return verifyAuditBatches(batches(), sha256);
  }

  /** For readiness: throws when the store cannot be written (a write lock can be taken). */
  async ping(): Promise<void> {
    this.db.exec('BEGIN IMMEDIATE; ROLLBACK');
  }

  /** Writes anything still pending, then closes. */
  close(): void {
    if (this.pending.length > 0) this.flush();
    this.db.close();
  }
}
