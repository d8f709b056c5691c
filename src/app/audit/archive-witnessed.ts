/**
 * The witnessed checkpoints an archive keeps (decisions §15, §19), so that it can be held to a
 * witness policy once the store is gone: `witnessed/N`, written by the `audit archive` run that
 * signed the archive's checkpoint of N records, holds the store's checkpoints of N records or
 * more that witnesses cosigned, each with its cosignatures and the consistency proof from the
 * archive's tree of N to it. Which are kept needs no policy: of the cosigned ones, every one
 * whose cosigners no newer one's include, so that whatever quorum one of them meets, one kept
 * does. Their check against the archive's tiles and a policy is archive-witnessing.ts's.
 *
 * The file is one JSON line: `{"size":N,"witnessed":[{"note":NOTE,"consistency":[BASE64,…]},…]}`,
 * the oldest checkpoint first, NOTE the signed note with its cosignature lines.
 */
import type { AuditCheckpoint } from '../../domain/audit/checkpoint.js';
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { AuditLog } from '../../ports/audit-log.js';
import type { Hash } from '../../tlog/merkle.js';
import { hashFromBase64, hashToBase64, type NoteVerifier } from '../../tlog/note.js';
import { TILE_WIDTH } from '../../tlog/tiles.js';
import { AuditArchiveError } from './archive-error.js';
import { AuditProofError, openCheckpoint, proveConsistency, type SignedTree } from './proving.js';
import { cosignedNote, cosignerNames } from './witnessed.js';

const WITNESSED_DIR = 'witnessed';

/** Where the witnessed checkpoints kept with the archive's checkpoint of `size` records are. */
export const witnessedPath = (size: number): string => `${WITNESSED_DIR}/${size}`;

const PATH = new RegExp(`^${WITNESSED_DIR}/([1-9][0-9]{0,15})$`);

/**
 * What the file at `path` is to an archive of `size` records, by its name alone: the size of
 * the archive's checkpoint its witnessed checkpoints were kept with (this archive's or an
 * earlier one's), `added` when it is none of its files, undefined when it is not below `witnessed/`.
 */
export function keptSizeOf(path: string, size: number): number | 'added' | undefined {
  if (!path.startsWith(`${WITNESSED_DIR}/`)) return undefined;
  const kept = Number(PATH.exec(path)?.[1] ?? Number.NaN);
  return Number.isSafeInteger(kept) && kept <= size && kept % TILE_WIDTH === 0 ? kept : 'added';
}

/** One witnessed checkpoint kept: its note with its cosignature lines, and the consistency proof from the archive's tree to it. */
export interface KeptCheckpoint {
  readonly note: string;
  readonly consistency: readonly Hash[];
}

const asJson = (size: number, kept: readonly KeptCheckpoint[]): string =>
  `${JSON.stringify({ size, witnessed: kept.map((k) => ({ note: k.note, consistency: k.consistency.map(hashToBase64) })) })}\n`;

/** The checkpoints `witnessed/SIZE` keeps, read strictly (as {@link asJson} writes them), or what is wrong with it. */
export function parseKept(bytes: Uint8Array, size: number): KeptCheckpoint[] | { readonly invalid: string } {
  let text: string;
  let parsed: unknown;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    return { invalid: 'it is not JSON' };
  }
  const { size: of, witnessed } = (parsed ?? {}) as { size?: unknown; witnessed?: unknown };
  if (of !== size) return { invalid: `it does not say it is of the archive's checkpoint of ${size} records` };
  if (!Array.isArray(witnessed) || witnessed.length === 0) return { invalid: 'it keeps no checkpoint' };
  const kept: KeptCheckpoint[] = [];
  for (const entry of witnessed as { note?: unknown; consistency?: unknown }[]) {
    const hashes = Array.isArray(entry?.consistency) ? entry.consistency : undefined;
    const consistency = (hashes ?? []).map((h) => (typeof h === 'string' ? hashFromBase64(h) : undefined));
    if (typeof entry?.note !== 'string' || hashes === undefined || consistency.includes(undefined)) {
      return { invalid: `checkpoint ${kept.length + 1} is not a note and its consistency proof` };
    }
    kept.push({ note: entry.note, consistency: consistency as Hash[] });
  }
  return asJson(size, kept) === text ? kept : { invalid: 'it is not written as audit archive writes it' };
}

/**
 * The store's checkpoints to keep with the archive's of `size` records: those of `size` or more
 * records with a note and a cosignature, less each whose cosigners (by the names of their lines)
 * a newer one's include; oldest first. A checkpoint that cannot be read is refused.
 */
async function cosignedFrom(
  log: Pick<AuditLog, 'checkpoints'>,
  size: number,
): Promise<(AuditCheckpoint & { readonly note: string })[]> {
  let kept: { checkpoint: AuditCheckpoint & { readonly note: string }; names: string[] }[] = [];
  for await (const read of log.checkpoints()) {
    if ('invalid' in read) throw new AuditArchiveError(`a stored checkpoint cannot be read: ${read.invalid}`);
    if (read.note === undefined || read.seq < size) continue;
    const names = cosignerNames(read.cosignatures);
    if (names.length === 0) continue;
    // Lowest seq first: this one is the newest yet.
    kept = kept.filter((older) => !older.names.every((name) => names.includes(name)));
    kept.push({ checkpoint: { ...read, note: read.note }, names });
  }
  return kept.map((k) => k.checkpoint);
}

/**
 * Keeps with the archive's tree `archived` (its checkpoint about to be signed) the store's
 * witnessed checkpoints that extend it ({@link cosignedFrom}), each note opened with `keys` (one
 * signed by a key not given, from before a rotation, is not kept) and its consistency proof
 * from `archived` made of the stored tree and checked. Whether `witnessed/SIZE` was written: not
 * when no checkpoint was cosigned, nor when a run that stopped before its checkpoint wrote it.
 */
export async function keepWitnessed(
  hashes: AuditHashes,
  log: AuditLog,
  tiles: ArchiveTiles,
  put: (path: string, bytes: Uint8Array) => Promise<boolean>,
  archived: SignedTree,
  keys: readonly NoteVerifier[],
): Promise<boolean> {
  const path = witnessedPath(archived.size);
  if (await tiles.has(path)) return false;
  const kept: KeptCheckpoint[] = [];
  for (const checkpoint of await cosignedFrom(log, archived.size)) {
    let body: SignedTree;
    try {
      body = openCheckpoint(checkpoint.note, keys, `the store's checkpoint at seq ${checkpoint.seq}`).body;
    } catch (error) {
      if (error instanceof AuditProofError && error.why === 'no-key') continue;
      throw error;
    }
    const consistency = await proveConsistency(hashes, log, archived.size, body.size, body);
    kept.push({ note: cosignedNote(checkpoint), consistency });
  }
  if (kept.length === 0) return false;
  return put(path, new TextEncoder().encode(asJson(archived.size, kept)));
}
