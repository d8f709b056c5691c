import type pg from 'pg';
import {
  type AuditQuery,
  type AuditRecord,
  type AuditVerification,
  chainRecord,
  type StoredAuditRecord,
  verifyAuditBatches,
} from '../../domain/audit/record.js';
import type { AuditLog } from '../../ports/audit-log.js';
import { sha256Hex } from '../shared/sha256.js';
import { inTransaction, type PostgresStoreDescription } from './database.js';

export const AUDIT_STORE: PostgresStoreDescription = {
  what: 'audit store',
  createHint: 'case-read serve (it creates the audit store)',
  migrations: [
    `
    CREATE TABLE audit (
      seq                 BIGINT PRIMARY KEY,
      at                  TIMESTAMPTZ NOT NULL,
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
    -- The chain head: one row, locked by each append transaction.
    CREATE TABLE audit_head (
      id    BOOLEAN PRIMARY KEY DEFAULT true CHECK (id),
      seq   BIGINT NOT NULL,
      hash  TEXT NOT NULL
    );
    INSERT INTO audit_head (seq, hash) VALUES (0, '${'0'.repeat(64)}');
    `,
  ],
};

/** Records read per round trip by `verify`. */
export const VERIFY_BATCH = 10_000;

const sha256 = sha256Hex;

interface Row {
  seq: string;
  at: Date;
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
  seq: Number(r.seq),
  at: r.at,
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

interface Pending {
  record: AuditRecord;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The audit trail in PostgreSQL: one chain, written by every instance.
 *
 * Each append transaction locks the chain head row (`SELECT … FOR UPDATE`), links its
 * records onto it, inserts them in one statement and moves the head, so appends from any
 * number of instances form one chain, serialised by the database: none is lost, none
 * forks, none is refused because another instance wrote first. Each instance keeps group
 * commit: while one transaction is in flight, the records appended meanwhile wait and go
 * together in the next, so the lock is taken once per batch, not once per request. An
 * `append` resolves only once its transaction has committed; if it cannot commit, every
 * append of the batch rejects and the service answers 503.
 */
export class PostgresAuditLog implements AuditLog {
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;

  constructor(private readonly pool: pg.Pool) {}

  append(record: AuditRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ record, resolve, reject });
      if (!this.flushing) this.flushing = this.drain();
    });
  }

  /** Writes batches until nothing is pending. */
  private async drain(): Promise<void> {
    // Let the rest of this event-loop turn append too.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.write(batch.map((p) => p.record));
        for (const p of batch) p.resolve();
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.flushing = undefined;
  }

  private async write(records: readonly AuditRecord[]): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const head = await client.query<{ seq: string; hash: string }>(
        'SELECT seq, hash FROM audit_head FOR UPDATE',
      );
      let seq = Number(head.rows[0]?.seq ?? 0);
      let hash = head.rows[0]?.hash ?? '';
      const cols: unknown[][] = Array.from({ length: 11 }, () => []);
      for (const record of records) {
        const stored = chainRecord(record, seq + 1, hash, sha256);
        const values = [
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
        ];
        values.forEach((v, i) => {
          cols[i]?.push(v);
        });
        seq = stored.seq;
        hash = stored.hash;
      }
      await client.query(
        `INSERT INTO audit (seq, at, request_id, client_id, certificate_serial, on_behalf_of, operation, crn, status, previous_hash, hash)
         SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[],
                              $7::text[], $8::text[], $9::int[], $10::text[], $11::text[])`,
        cols,
      );
      await client.query('UPDATE audit_head SET seq = $1, hash = $2', [seq, hash]);
    });
  }

  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.clientId !== undefined) add('client_id = ?', filter.clientId);
    if (filter.crn !== undefined) add('crn = ?', filter.crn);
    if (filter.since !== undefined) add('at >= ?', filter.since);
    params.push(filter.limit ?? 1000);
    const { rows } = await this.pool.query<Row>(
      `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq LIMIT $${params.length}`,
      params,
    );
    return rows.map(toRecord);
  }

  /** Walks the chain in batches of {@link VERIFY_BATCH}, by sequence number (keyset paging). */
  async verify(): Promise<AuditVerification> {
    const pool = this.pool;
    async function* batches() {
      let after = 0;
      for (;;) {
        const { rows } = await pool.query<Row>({
          name: 'audit-verify-page',
          text: 'SELECT * FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2',
          values: [after, VERIFY_BATCH],
        });
        if (rows.length === 0) return;
        after = Number((rows.at(-1) as Row).seq);
        yield rows.map(toRecord);
      }
    }
    return verifyAuditBatches(batches(), sha256);
  }

  /** For readiness: the head row can be read (and so locked) now. */
  async ping(): Promise<void> {
    await this.pool.query('SELECT seq FROM audit_head');
  }

  /** Waits for anything pending to be written. */
  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
  }
}
