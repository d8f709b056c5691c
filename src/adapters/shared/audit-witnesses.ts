import {
  type AuditCheckpoint,
  describeCheckpoint,
  mergeCosignatures,
} from '../../domain/audit/checkpoint.js';

/**
 * What the audit stores keep of the witnesses (decisions §19), as both SQL stores keep it:
 * each checkpoint's cosignatures in a column beside it, and the tree size each witness last
 * cosigned in a table of their own. The JSONL store keeps the same in a file of its own
 * (jsonl/audit-witnesses.ts), with the same checks.
 */

/**
 * Audit store version 8 on SQLite, 7 on PostgreSQL: a checkpoint's cosignatures, its signature
 * lines joined by newlines (each `— NAME BASE64`, no newline of its own: the lines as the note
 * carries them, less the last newline; NULL while none), and each witness's size, by its vkey
 * line. Expand-only: a nullable column and a new table, which an older release does not read.
 */
export const auditWitnessesSql = (types: { readonly size: string }) => `
  ALTER TABLE audit_checkpoints ADD COLUMN cosignatures TEXT;
  CREATE TABLE audit_witness_sizes (
    vkey        TEXT PRIMARY KEY,
    size        ${types.size} NOT NULL,
    updated_at  TEXT NOT NULL
  );
`;

/** The lines of a stored cosignatures column (none when NULL or empty). */
export const cosignatureLinesOf = (text: string | null | undefined): string[] =>
  text ? text.split('\n') : [];

/** The cosignatures of one checkpoint, by the table's key (seq, key id, signature); no row when not stored. */
export const cosignaturesRowSql = (p: (n: number) => string) =>
  `SELECT cosignatures FROM audit_checkpoints WHERE seq = ${p(1)} AND key_id = ${p(2)} AND signature = ${p(3)}`;

/** Sets the cosignatures (`$1`) of one checkpoint, by the table's key (`$2`, `$3`, `$4`). */
export const setCosignaturesSql = (p: (n: number) => string) =>
  `UPDATE audit_checkpoints SET cosignatures = ${p(1)} WHERE seq = ${p(2)} AND key_id = ${p(3)} AND signature = ${p(4)}`;

/** The key of a checkpoint's row, as {@link cosignaturesRowSql} takes it. */
export const checkpointKeyOf = (c: AuditCheckpoint): [number, string, string] => [
  c.seq,
  c.keyId,
  c.signature,
];

/**
 * The cosignatures column of the checkpoint `checkpoint` once `lines` join what its row holds
 * (read under the row's write lock): undefined when it held them all already. Throws, built
 * by `error`, when there is no row (the checkpoint is not stored), a line is not a signature
 * line, or it would hold too many.
 */
export function mergedCosignaturesText(
  checkpoint: AuditCheckpoint,
  row: { readonly cosignatures: string | null } | undefined,
  lines: readonly string[],
  error: (message: string) => Error,
): string | undefined {
  if (row === undefined)
    throw error(`cannot add cosignatures to the ${describeCheckpoint(checkpoint)}: it is not stored`);
  const merged = mergeCosignatures(cosignatureLinesOf(row.cosignatures), lines);
  if ('invalid' in merged)
    throw error(`cannot add cosignatures to the ${describeCheckpoint(checkpoint)}: ${merged.invalid}`);
  return merged.fresh.length === 0 ? undefined : merged.lines.join('\n');
}

/** The longest vkey line kept for a witness: a name of up to 256 characters and its key, with room to spare. */
const MAX_VKEY = 1024;

/** What is wrong with a witness's size to keep (its vkey line and the size), or undefined. */
export function witnessSizeProblem(vkey: unknown, size: unknown): string | undefined {
  if (typeof vkey !== 'string' || vkey.length === 0 || vkey.length > MAX_VKEY)
    return `a witness's vkey must be 1 to ${MAX_VKEY} characters`;
  for (let i = 0; i < vkey.length; i++) {
    const code = vkey.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return "a witness's vkey holds a control character";
  }
  if (!Number.isSafeInteger(size) || (size as number) < 0)
    return `a witness's size must be a whole number from 0, not ${String(size)}`;
  return undefined;
}

/** Records a witness's size (`$1` vkey, `$2` size, `$3` when), replacing the one it had. */
export const saveWitnessSizeSql = (p: (n: number) => string) =>
  `INSERT INTO audit_witness_sizes (vkey, size, updated_at) VALUES (${p(1)}, ${p(2)}, ${p(3)})
   ON CONFLICT (vkey) DO UPDATE SET size = excluded.size, updated_at = excluded.updated_at`;

export const WITNESS_SIZES_SQL = 'SELECT vkey, size FROM audit_witness_sizes';

/** One row of the witness sizes, as a driver returns it (PostgreSQL's BIGINT as text). */
export interface WitnessSizeRow {
  readonly vkey: string;
  readonly size: number | string;
}

/** The rows as a map by vkey; a row that is not a well-formed size is left out. */
export function witnessSizesOfRows(rows: readonly WitnessSizeRow[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const row of rows) {
    const size = typeof row.size === 'string' && /^\d{1,16}$/.test(row.size) ? Number(row.size) : row.size;
    if (witnessSizeProblem(row.vkey, size) === undefined) sizes.set(row.vkey, size as number);
  }
  return sizes;
}
