/**
 * Reads the archive's index by crn (decisions §15, §22): where the archived records naming one
 * crn are, from a few small files a group, never the bundles; and the index's files and formats
 * that its writer (`audit archive`, crn-index-write.ts) and its check (`audit verify --archive`,
 * crn-index-verify.ts) share, which both make of the records with crn-index-make.ts.
 *
 * Layout (docs/operations/audit-trail.md, "The index by crn"): group g (256 bundles, a
 * parameter only for tests) is `crn-index/G/S` for each shard S (0 … f, the first hex digit of
 * SHA-256(crn)) and `crn-index/G/hashes` (their SHA-256s), the partial last one
 * `crn-index/G.p/B/…`; a shard is a line `["CRN",[SEQ,…]]` per crn, sorted; `crn-index/signed/N`
 * a note signed by the archive's key over the header, origin, N, root and the groups' hashes.
 * Every file is written once and never replaced: a later archive adds the files of its size.
 */
import { auditRecordOfEntry, seqAndCrnOfEntry } from '../../domain/audit/canonical-text.js';
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import { type Hash, type Sha256, sameHash } from '../../tlog/merkle.js';
import {
  type CheckpointBody,
  fromBase64,
  type NoteVerifier,
  openNote,
  toBase64,
  verifyWith,
} from '../../tlog/note.js';
import { TILE_WIDTH, tileIndexPath } from '../../tlog/tiles.js';
import { AuditArchiveError } from './archive-error.js';

export const CRN_INDEX_DIR = 'crn-index';
/** Records a group of the index covers: 256 bundles. */
export const CRN_GROUP_RECORDS = 65_536;
export const CRN_SHARDS = 16;
/** The index note's first line: no checkpoint begins so (an origin holds no space). */
export const CRN_INDEX_HEADER = 'case-read crn index v1';
const HASH_BYTES = 32;

/** What a missing index asks for. */
export const WRITE_THE_INDEX = "run case-read audit archive to write the archive's crn index";
const VERIFY = 'run case-read audit verify --archive';

/** The tree the index is of: the archive's checkpoint, opened (and checked) by the caller. */
export type IndexedTree = Pick<CheckpointBody, 'origin' | 'size' | 'root'>;

/** A group's size (records), checked: whole bundles. */
export function checkedGroupSize(groupSize: number): number {
  if (!Number.isSafeInteger(groupSize) || groupSize < TILE_WIDTH || groupSize % TILE_WIDTH !== 0)
    throw new RangeError(`a crn index group of ${groupSize} records is not whole bundles of ${TILE_WIDTH}`);
  return groupSize;
}

/** A group of the index as an archive holds it: its number, its bundles (all of a group's when full), where its files are. */
export interface CrnGroup {
  readonly group: number;
  readonly bundles: number;
  readonly dir: string;
  /** Its first and last seq. */
  readonly first: number;
  readonly last: number;
}

/** Group `group` of `bundles` bundles (a full one: the group's every bundle). */
export function crnGroup(group: number, bundles: number, groupSize: number): CrnGroup {
  const full = bundles === groupSize / TILE_WIDTH;
  const first = group * groupSize + 1;
  return {
    group,
    bundles,
    dir: `${CRN_INDEX_DIR}/${tileIndexPath(group)}${full ? '' : `.p/${bundles}`}`,
    first,
    last: first + bundles * TILE_WIDTH - 1,
  };
}

/** The groups of the index of `size` records, in order: the full ones, then the partial one if any. */
export function* crnGroupsOf(size: number, groupSize: number): Generator<CrnGroup> {
  const full = Math.floor(size / groupSize);
  for (let group = 0; group < full; group++) yield crnGroup(group, groupSize / TILE_WIDTH, groupSize);
  const rest = (size % groupSize) / TILE_WIDTH;
  if (rest > 0) yield crnGroup(full, rest, groupSize);
}

export const crnShardPath = (group: CrnGroup, shard: number): string => `${group.dir}/${shard.toString(16)}`;
export const crnHashesPath = (group: CrnGroup): string => `${group.dir}/hashes`;
/** A group's files: its 16 shards, then its hashes file. */
export const crnGroupPaths = (group: CrnGroup): string[] => [
  ...Array.from({ length: CRN_SHARDS }, (_, shard) => crnShardPath(group, shard)),
  crnHashesPath(group),
];
export const crnNotePath = (size: number): string => `${CRN_INDEX_DIR}/signed/${size}`;
/** The files of the index of `size` records, in order: each group's, then its note. */
export function* crnIndexPaths(size: number, groupSize: number): Generator<string> {
  for (const group of crnGroupsOf(size, groupSize)) yield* crnGroupPaths(group);
  yield crnNotePath(size);
}
/** The shard a crn is in: the first hex digit of SHA-256 of its UTF-8 (`sha256Hex`: the chain's, one call a crn). */
export const crnShardOf = (sha256Hex: (text: string) => string, crn: string): number =>
  Number.parseInt(sha256Hex(crn).charAt(0), 16);

/**
 * What the index note signs of the groups: SHA-256 over the SHA-256 of each group's hashes
 * file, in order (in one buffer: an archive of years has too many groups to spread).
 */
export function crnIndexDigest(sha256: Sha256, digests: readonly Hash[]): Hash {
  const all = new Uint8Array(digests.length * HASH_BYTES);
  digests.forEach((digest, i) => {
    all.set(digest, i * HASH_BYTES);
  });
  return sha256(all);
}

/** The digest an index note's text signs, or undefined when the text is not the note of `tree`. */
function digestOfNote(text: string, tree: IndexedTree): Hash | undefined {
  const lines = text.split('\n');
  const expected = [CRN_INDEX_HEADER, tree.origin, String(tree.size), toBase64(tree.root)];
  if (lines.length !== 6 || lines[5] !== '' || expected.some((line, i) => lines[i] !== line))
    return undefined;
  const digest = fromBase64(lines[4] as string);
  return digest?.length === HASH_BYTES ? digest : undefined;
}

/**
 * The crn of each of a bundle's entries, which must be the records `firstSeq` … on; or the
 * first entry that is not. Only the crn is wanted: whether the entries are the tree's leaves is
 * the caller's to check. Each entry is read back as a whole record (auditRecordOfEntry: the
 * record that writes it out to the byte), unless `leaves`: entries the caller has shown to be
 * the leaves of the signed tree (`audit verify --archive`), which an archive writes only as
 * records' canonical texts, are read as JSON, the crn and the seq taken from their places (the
 * same fields, at a third of the cost).
 */
export function crnsOfEntries(
  entries: readonly Uint8Array[],
  firstSeq: number,
  leaves = false,
): (string | null)[] | { readonly notRecord: number } {
  const decoder = new TextDecoder();
  const crns: (string | null)[] = [];
  for (let i = 0; i < entries.length; i++) {
    const text = decoder.decode(entries[i]);
    const read = leaves ? seqAndCrnOfEntry(text) : auditRecordOfEntry(text, () => '');
    if (read?.seq !== firstSeq + i) return { notRecord: i };
    crns.push(read.crn);
  }
  return crns;
}

/** An index file's bytes; missing or unreadable, an AuditArchiveError naming it and what to do. */
export async function readIndexFile(tiles: ArchiveTiles, path: string): Promise<Uint8Array> {
  let bytes: Uint8Array | undefined;
  let code: string | undefined;
  try {
    bytes = await tiles.read(path);
  } catch (error) {
    code = (error as { code?: string }).code ?? 'error';
  }
  if (bytes !== undefined) return bytes;
  throw new AuditArchiveError(
    code === undefined
      ? `${path} is missing from ${tiles.location}: ${WRITE_THE_INDEX}`
      : `${path} in ${tiles.location} cannot be read (${code})`,
  );
}

/** The index note of `tree` read, opened with `keys` (a key named by its origin) and read: the digest it signs. */
async function openIndexNote(
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
  tree: IndexedTree,
): Promise<Hash> {
  const path = crnNotePath(tree.size);
  const note = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await readIndexFile(tiles, path));
  const opened = openNote(note, keys, verifyWith(keys));
  if (!opened.ok) throw new AuditArchiveError(`${path}: ${opened.reason}; ${VERIFY}`);
  const digest = digestOfNote(opened.text, tree);
  if (!opened.verifiedBy.some((key) => key.startsWith(`${tree.origin}+`)) || digest === undefined) {
    throw new AuditArchiveError(
      `${path} is not the crn index note of the archive's tree (${tree.size} records of ${tree.origin}); ${VERIFY}`,
    );
  }
  return digest;
}

/**
 * Every group's hashes file of the index of `size` records read, in order, each handed to `each`
 * as it is read: the SHA-256 of each, for the note's digest.
 */
async function groupHashes(
  sha256: Sha256,
  tiles: ArchiveTiles,
  size: number,
  groupSize: number,
  each?: (group: CrnGroup, hashes: Uint8Array) => Promise<void>,
): Promise<Hash[]> {
  const digests: Hash[] = [];
  for (const group of crnGroupsOf(size, groupSize)) {
    const path = crnHashesPath(group);
    const hashes = await readIndexFile(tiles, path);
    if (hashes.length !== CRN_SHARDS * HASH_BYTES)
      throw new AuditArchiveError(`${path} is not ${CRN_SHARDS} hashes: it was changed; ${VERIFY}`);
    digests.push(sha256(hashes));
    await each?.(group, hashes);
  }
  return digests;
}

/** The refusal of hashes files that do not make what the note signs. */
const notSigned = (tree: IndexedTree) =>
  new AuditArchiveError(
    `the crn index's hashes files (${CRN_INDEX_DIR}/…/hashes) are not those ${crnNotePath(tree.size)} signs: one was changed, removed or added; ${VERIFY}`,
  );

/**
 * The SHA-256 of each group's hashes file of the index of `tree`, once they make what its signed
 * note signs (the writer's: an index it adds to is one it can trust). An AuditArchiveError otherwise.
 */
export async function signedGroupDigests(
  sha256: Sha256,
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
  tree: IndexedTree,
  groupSize: number,
): Promise<Hash[]> {
  const signed = await openIndexNote(tiles, keys, tree);
  const digests = await groupHashes(sha256, tiles, tree.size, groupSize);
  if (!sameHash(crnIndexDigest(sha256, digests), signed)) throw notSigned(tree);
  return digests;
}

/**
 * The seqs of the archived records naming `crn`, ascending, read from the archive's crn index:
 * for an archive whose checkpoint (`tree`, opened and checked by the caller) signs its size.
 * Reads the index note of that size (opened with `keys`: its signature, first line, origin,
 * size and root), every group's hashes file (checked against the note), and only the crn's
 * shard file of each group (checked against its hashes file, then read strictly): a few small
 * files a group, never a bundle. A file missing, changed or unreadable, or a bad signature, is
 * refused (an AuditArchiveError naming the file and what to do): never fewer seqs than there are.
 */
export async function archivedSeqsNaming(
  hashes: AuditHashes,
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
  tree: IndexedTree,
  crn: string,
  groupSize: number = CRN_GROUP_RECORDS,
): Promise<number[]> {
  const sha256 = hashes.sha256;
  checkedGroupSize(groupSize);
  if (!Number.isSafeInteger(tree.size) || tree.size < 0 || tree.size % TILE_WIDTH !== 0)
    throw new AuditArchiveError(`an archive of ${tree.size} records is not whole bundles of ${TILE_WIDTH}`);
  if (tree.size === 0) return [];
  const signed = await openIndexNote(tiles, keys, tree);
  const shard = crnShardOf(hashes.sha256Hex, crn);
  const seqs: number[] = [];
  const digests = await groupHashes(sha256, tiles, tree.size, groupSize, async (group, listed) => {
    const path = crnShardPath(group, shard);
    const bytes = await readIndexFile(tiles, path);
    if (!sameHash(sha256(bytes), listed.subarray(shard * HASH_BYTES, (shard + 1) * HASH_BYTES))) {
      throw new AuditArchiveError(
        `${path} is not the shard ${crnHashesPath(group)} lists: it was changed; ${VERIFY}`,
      );
    }
    for (const seq of seqsOfCrnInShard(bytes, crn, group, path)) seqs.push(seq);
  });
  if (!sameHash(crnIndexDigest(sha256, digests), signed)) throw notSigned(tree);
  return seqs;
}

/** A shard file's line read strictly: `["CRN",[SEQ,…]]` as JSON.stringify writes it, or undefined. */
function lineOf(line: string): { readonly crn: string; readonly seqs: readonly number[] } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  const [crn, seqs] = parsed as [unknown, unknown];
  if (typeof crn !== 'string' || !Array.isArray(seqs) || seqs.length === 0) return undefined;
  if (!seqs.every((seq) => Number.isSafeInteger(seq))) return undefined;
  return JSON.stringify(parsed) === line ? { crn, seqs } : undefined;
}

/** A shard file's text, and the refusal that names it; one that is not UTF-8 is refused. */
function shardText(bytes: Uint8Array, path: string) {
  const refuse = (why: string) =>
    new AuditArchiveError(`${path} is not a crn index shard: ${why}; ${VERIFY}`);
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes), refuse };
  } catch {
    throw refuse('it is not UTF-8');
  }
}

/** Refuses seqs not ascending within the group's records, naming the line. */
function checkAscending(
  seqs: readonly number[],
  group: CrnGroup,
  refuse: (why: string) => Error,
  which: string,
): void {
  let before = group.first - 1;
  for (const seq of seqs) {
    if (seq <= before || seq > group.last) {
      throw refuse(
        `${which} seqs are not ascending within the group's records ${group.first}..${group.last}`,
      );
    }
    before = seq;
  }
}

/**
 * The seqs the shard file lists for `crn` (none when it has no line), every line of it read
 * strictly: malformed, out of order (or repeated), or a seq not ascending or outside the
 * group, and the file is refused.
 */
export function seqsInShard(bytes: Uint8Array, crn: string, group: CrnGroup, path: string): number[] {
  const { text, refuse } = shardText(bytes, path);
  if (text === '') return [];
  if (!text.endsWith('\n')) throw refuse('its last line has no newline');
  let found: readonly number[] = [];
  let previous: string | undefined;
  let start = 0;
  for (let n = 1; start < text.length; n++) {
    const end = text.indexOf('\n', start);
    const line = lineOf(text.slice(start, end));
    start = end + 1;
    if (line === undefined) throw refuse(`line ${n} is not ["CRN",[SEQ,…]]`);
    if (previous !== undefined && !(previous < line.crn))
      throw refuse(`line ${n}'s crn does not come after line ${n - 1}'s (repeated, or not sorted)`);
    previous = line.crn;
    checkAscending(line.seqs, group, refuse, `line ${n}'s`);
    if (line.crn === crn) found = line.seqs;
  }
  return [...found];
}

/**
 * The seqs a shard lists for `crn`, its one line read strictly, the rest unread (the file's
 * SHA-256 checked against the signed note first: every line is the signer's; reading each cost
 * a SAR 0.3 s on 9M archived records).
 */
export function seqsOfCrnInShard(bytes: Uint8Array, crn: string, group: CrnGroup, path: string): number[] {
  const { text, refuse } = shardText(bytes, path);
  const prefix = `[${JSON.stringify(crn)},[`;
  const at = text.startsWith(prefix) ? 0 : text.indexOf(`\n${prefix}`);
  if (at < 0) return [];
  const start = at === 0 && text.startsWith(prefix) ? 0 : at + 1;
  const end = text.indexOf('\n', start);
  if (end < 0) throw refuse('its last line has no newline');
  if (text.indexOf(`\n${prefix}`, end) >= 0) throw refuse('the crn has more than one line');
  const line = lineOf(text.slice(start, end));
  if (line?.crn !== crn) throw refuse(`the crn's line is not ["CRN",[SEQ,…]]`);
  checkAscending(line.seqs, group, refuse, "the crn's");
  return [...line.seqs];
}
