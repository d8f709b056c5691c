import { type ArchivedStart, chainRecord, GENESIS_HASH } from '../../domain/audit/chain.js';
import { type AuditVerification, verifyAuditBatches } from '../../domain/audit/chain-walker.js';
import {
  type AuditCheckpoint,
  type ChainHead,
  type CheckpointSet,
  checkpointOf,
} from '../../domain/audit/checkpoint.js';
import type { AuditQuery, AuditRecord, StoredAuditRecord } from '../../domain/audit/record.js';
import { cosignatureLinesOf } from './audit-witnesses.js';
import { sha256Bytes, sha256Hex } from './sha256.js';

/**
 * What the audit stores share (SQLite, PostgreSQL and JSONL): linking a batch onto the
 * chain's head, and for the two SQL stores the one table layout, its row mapping, the
 * query filter and the paged walk that `verify` makes.
 */

export type { ChainHead };

/** The head of an empty chain. */
export const EMPTY_CHAIN: ChainHead = { seq: 0, hash: GENESIS_HASH };

/** Links `records`, in order, onto `head`; returns them as stored, and the new head. */
export function linkRecords(
  records: readonly AuditRecord[],
  head: ChainHead,
): { readonly stored: StoredAuditRecord[]; readonly head: ChainHead } {
  let { seq, hash } = head;
  const stored = records.map((record) => {
    const linked = chainRecord(record, seq + 1, hash, sha256Hex);
    seq = linked.seq;
    hash = linked.hash;
    return linked;
  });
  return { stored, head: { seq, hash } };
}

/** The audit table's columns, in the order the SQL stores insert them. */
export const AUDIT_COLUMNS = [
  'seq',
  'at',
  'request_id',
  'client_id',
  'certificate_serial',
  'on_behalf_of',
  'operation',
  'crn',
  'status',
  'previous_hash',
  'hash',
  'version',
  'problem',
  'access',
  'issued',
  'continuation',
] as const;

/**
 * The audit table and its indexes, as both SQL stores create it; only the types of the
 * sequence number and the time differ between engines.
 */
export const auditTableSql = (types: { readonly seq: string; readonly at: string }) => `
  CREATE TABLE audit (
    seq                 ${types.seq} PRIMARY KEY,
    at                  ${types.at} NOT NULL,
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
`;

/**
 * Record format version 2: the problem type of a refusal and the limited-access marking.
 * Records stored before are version 1 and keep the text their hash covers.
 */
export const auditVersion2Sql = `
  ALTER TABLE audit ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE audit ADD COLUMN problem TEXT;
  ALTER TABLE audit ADD COLUMN access TEXT;
`;

/**
 * Record format version 3: the serial of a certificate issued to the request. Records
 * stored before are versions 1 and 2 and keep the text their hash covers.
 */
export const auditVersion3Sql = `
  ALTER TABLE audit ADD COLUMN issued TEXT;
`;

/**
 * Record format version 5: the signed statement of a trail's continuation after a loss (ADR
 * 30), on the one record that carries it, and the index that finds those few records. Records
 * stored before keep the text their hash covers (the column is empty on every other record).
 * Audit store version 9 on SQLite, 8 on PostgreSQL.
 */
export const auditContinuationSql = `
  ALTER TABLE audit ADD COLUMN continuation TEXT;
  CREATE INDEX audit_continuations ON audit (seq) WHERE continuation IS NOT NULL;
`;

/** Every continuation record, oldest first, through {@link auditContinuationSql}'s index. */
export const CONTINUATIONS_SQL = 'SELECT * FROM audit WHERE continuation IS NOT NULL ORDER BY seq';

/** A stored record as one row's values, in {@link AUDIT_COLUMNS} order (the time as ISO 8601). */
export function rowValuesOf(stored: StoredAuditRecord): unknown[] {
  return [
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
    stored.version,
    stored.problem,
    stored.access,
    stored.issued,
    stored.continuation ?? null,
  ];
}

/** One row of the audit table, as a driver returns it: PostgreSQL's BIGINT as text, its TIMESTAMPTZ as a Date. */
export interface AuditRow {
  readonly seq: number | string;
  readonly at: string | Date;
  readonly request_id: string;
  readonly client_id: string;
  readonly certificate_serial: string;
  readonly on_behalf_of: string | null;
  readonly operation: string;
  readonly crn: string | null;
  readonly status: number;
  readonly previous_hash: string;
  readonly hash: string;
  readonly version: number;
  readonly problem: string | null;
  readonly access: string | null;
  readonly issued: string | null;
  /** The continuation statement (format 5); null on every other record. */
  readonly continuation: string | null;
}

/**
 * A row as the stored record: `continuation` only on a row that carries one (as
 * `chainRecord` links it and an archived entry reads back), so an ordinary record has no such
 * property; a row whose version and continuation disagree is read as it is, for `verify` to name.
 */
export const recordOfRow = (r: AuditRow): StoredAuditRecord => ({
  version: r.version,
  seq: Number(r.seq),
  at: new Date(r.at),
  requestId: r.request_id,
  clientId: r.client_id,
  certificateSerial: r.certificate_serial,
  onBehalfOf: r.on_behalf_of,
  operation: r.operation,
  crn: r.crn,
  status: r.status,
  problem: r.problem,
  access: r.access,
  issued: r.issued,
  ...(r.continuation == null ? {} : { continuation: r.continuation }),
  previousHash: r.previous_hash,
  hash: r.hash,
});

/**
 * `SELECT * FROM audit` filtered as `audit query` asks, oldest first, with the engine's
 * placeholders (`?` or `$n`).
 */
export function auditQuerySql(
  filter: AuditQuery,
  placeholder: (n: number) => string,
): { readonly text: string; readonly values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (column: string, value: unknown) => {
    values.push(value);
    where.push(`${column} ${placeholder(values.length)}`);
  };
  if (filter.requestId !== undefined) add('request_id =', filter.requestId);
  if (filter.clientId !== undefined) add('client_id =', filter.clientId);
  if (filter.crn !== undefined) add('crn =', filter.crn);
  if (filter.since !== undefined) add('at >=', filter.since.toISOString());
  values.push(filter.limit ?? 1000);
  const text = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq LIMIT ${placeholder(values.length)}`;
  return { text, values };
}

/** Records read per round trip by `verify`: memory stays constant whatever the chain's length. */
export const VERIFY_BATCH = 10_000;

/** The text of one page of the walk: the records after `$1`/`?`, at most `$2`/`?` of them. */
export const verifyPageSql = (placeholder: (n: number) => string) =>
  `SELECT * FROM audit WHERE seq > ${placeholder(1)} ORDER BY seq LIMIT ${placeholder(2)}`;

/**
 * The records from seq `from` on, oldest first, by keyset paging, {@link VERIFY_BATCH} at a
 * time, the event loop let through between pages.
 */
export async function* recordsByPages(
  page: (afterSeq: number, limit: number) => Promise<readonly AuditRow[]> | readonly AuditRow[],
  from = 1,
  limit = Number.POSITIVE_INFINITY,
): AsyncGenerator<readonly StoredAuditRecord[]> {
  let after = from - 1;
  let left = limit;
  for (;;) {
    const rows = await page(after, Math.min(VERIFY_BATCH, left));
    left -= rows.length;
    if (rows.length === 0) return;
    const records = rows.map(recordOfRow);
    after = (records.at(-1) as StoredAuditRecord).seq;
    yield records;
    if (left <= 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Verifies the chain by keyset paging through it, {@link VERIFY_BATCH} records at a time,
 * against the checkpoints when given.
 */
export function verifyByPages(
  page: (afterSeq: number, limit: number) => Promise<readonly AuditRow[]> | readonly AuditRow[],
  checkpoints?: CheckpointSet,
  /** Where the held trail begins when older records were archived and let go of. */
  from?: ArchivedStart,
): Promise<AuditVerification> {
  return verifyAuditBatches(
    recordsByPages(page, (from?.seq ?? 0) + 1),
    sha256Hex,
    checkpoints,
    sha256Bytes,
    from,
  );
}

/**
 * The signed checkpoints (decisions §9), in both SQL stores. The time is kept as the text
 * that was signed, so the signature can be checked again whatever the engine's clock type.
 * Two instances may sign the same head: both are kept.
 */
export const auditCheckpointsSql = (types: { readonly seq: string }) => `
  CREATE TABLE audit_checkpoints (
    seq        ${types.seq} NOT NULL,
    head       TEXT NOT NULL,
    time       TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    signature  TEXT NOT NULL,
    PRIMARY KEY (seq, key_id, signature)
  );
`;

/** One row of the checkpoints table, as a driver returns it (PostgreSQL's BIGINT as text). */
export interface CheckpointRow {
  readonly seq: number | string;
  readonly head: string;
  readonly time: string;
  readonly key_id: string;
  readonly signature: string;
  /** The signed note (store version 5); null on checkpoints made before. */
  readonly note?: string | null;
  /** Witnesses' cosignature lines joined by newlines (SQLite version 8, PostgreSQL 7); null while none. */
  readonly cosignatures?: string | null;
}

/**
 * The insert of one checkpoint with the engine's placeholders; one already stored is kept as
 * it is. Its cosignatures are added after, as any are (audit-witnesses.ts).
 */
export const saveCheckpointSql = (placeholder: (n: number) => string) =>
  `INSERT INTO audit_checkpoints (seq, head, time, key_id, signature, note)
   VALUES (${[1, 2, 3, 4, 5, 6].map(placeholder).join(', ')}) ON CONFLICT DO NOTHING`;

export const checkpointValuesOf = (
  c: AuditCheckpoint,
): [number, string, string, string, string, string | null] => [
  c.seq,
  c.head,
  c.time,
  c.keyId,
  c.signature,
  c.note ?? null,
];

export const NEWEST_CHECKPOINT_SQL = 'SELECT * FROM audit_checkpoints ORDER BY seq DESC LIMIT 1';

/** The newest checkpoint that carries a signed note. */
export const NEWEST_NOTED_CHECKPOINT_SQL =
  'SELECT * FROM audit_checkpoints WHERE note IS NOT NULL ORDER BY seq DESC LIMIT 1';

/** A stored row as a checkpoint, or what is wrong with it. */
export function checkpointOfRow(row: CheckpointRow): AuditCheckpoint | { readonly invalid: string } {
  const read = checkpointOf({
    seq: Number(row.seq),
    head: row.head,
    time: row.time,
    keyId: row.key_id,
    signature: row.signature,
    note: row.note ?? undefined,
    cosignatures: cosignatureLinesOf(row.cosignatures),
  });
  return 'invalid' in read ? { invalid: `stored checkpoint at seq ${row.seq}: ${read.invalid}` } : read;
}

/** The newest checkpoint row, if any, as a checkpoint; one that is not well formed counts as none. */
export function newestCheckpointOf(row: CheckpointRow | undefined): AuditCheckpoint | undefined {
  if (row === undefined) return undefined;
  const read = checkpointOfRow(row);
  return 'invalid' in read ? undefined : read;
}

/** Checkpoints read per round trip. */
const CHECKPOINT_PAGE = 1000;

/**
 * Every stored checkpoint, lowest seq first, by keyset paging over the table's key:
 * `page` runs `checkpointPageSql` with the last key read (`(0, '', '')` at the start).
 */
export async function* checkpointsByPages(
  page: (after: readonly [number, string, string], limit: number) => Promise<readonly CheckpointRow[]>,
): AsyncGenerator<AuditCheckpoint | { readonly invalid: string }> {
  let after: readonly [number, string, string] = [0, '', ''];
  for (;;) {
    const rows = await page(after, CHECKPOINT_PAGE);
    for (const row of rows) yield checkpointOfRow(row);
    const last = rows.at(-1);
    if (last === undefined || rows.length < CHECKPOINT_PAGE) return;
    after = [Number(last.seq), last.key_id, last.signature];
  }
}

/** One page of checkpoints after the key `(seq, key_id, signature)` given as the first three placeholders. */
export const checkpointPageSql = (placeholder: (n: number) => string) =>
  `SELECT * FROM audit_checkpoints
   WHERE (seq, key_id, signature) > (${placeholder(1)}, ${placeholder(2)}, ${placeholder(3)})
   ORDER BY seq, key_id, signature LIMIT ${placeholder(4)}`;
