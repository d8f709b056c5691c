// The archive's index by crn (src/app/audit/crn-index*.ts): written by `audit archive`, read for a SAR, checked by `audit verify --archive`.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { writeArchive } from '../../../src/app/audit/archive.js';
import { ArchiveReader } from '../../../src/app/audit/archive-reader.js';
import { verifyArchive } from '../../../src/app/audit/archive-verify.js';
import {
  archivedSeqsNaming,
  CRN_SHARDS,
  crnGroup,
  crnShardOf,
  seqsInShard,
} from '../../../src/app/audit/crn-index.js';
import { openCheckpoint } from '../../../src/app/audit/proving.js';
import { auditHashes, noteSigner } from '../../../src/app/composition/audit-keys.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { noteTextOf, signNote } from '../../../src/tlog/note.js';
import { bundlePath } from '../../../src/tlog/tiles.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { MemoryArchiveTiles } from '../../contract/memory-archive-tiles.js';
import { HELD_ARCHIVE_LOCK } from '../../support/audit.js';

/**
 * With groups of 512 records (two bundles) rather than 65536, an archive of a few groups is a
 * few thousand records: 768 archived (a full group and a partial one), the store letting go of
 * them, then 1792 (the partial group completed, one more full, a new partial one).
 */

const ORIGIN = 'case-read.test.example/audit';
const GROUP = 512;
const RECORDS = 1800;
const CRN = 'X123456';
const ODD = 'Ünïcode "q"\\';
/** Who each record names: one crn every seventh, none every fifth, one crn only in records 1100..1109. */
const names = (i: number): string | null =>
  i >= 1100 && i < 1110 ? 'ONLY' : i % 5 === 0 ? null : i % 7 === 0 ? CRN : i % 11 === 0 ? ODD : `A${i % 13}`;
const CRNS = [CRN, ODD, 'ONLY', 'A0', 'A12', 'nobody'];
/** The records of 1..size naming `crn`: what a full scan finds. */
const naming = (crn: string, size: number) =>
  Array.from({ length: size }, (_, i) => i + 1).filter((i) => names(i) === crn);

const dir = mkdtempSync(join(tmpdir(), 'case-read-crn-index-'));
let note: ReturnType<typeof noteSigner>;
let stranger: ReturnType<typeof noteSigner>;
let signer: Awaited<ReturnType<typeof checkpointSigner>>;
let trails = 0;
const logs: SqliteAuditLog[] = [];
/** The archive of 1792 records written in two runs (the store letting go of 1..768 between): each test changes a copy. */
let built: MemoryArchiveTiles;

/** A SQLite trail of RECORDS records, grown and signed. */
async function trail(): Promise<SqliteAuditLog> {
  const log = SqliteAuditLog.open(join(dir, `audit-${++trails}.db`));
  logs.push(log);
  for (let i = 1; i <= RECORDS; i++) void log.append(auditRecord(i, { crn: names(i) }));
  await log.flush();
  const grown = await log.growTree();
  await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
  return log;
}

const archive = (log: SqliteAuditLog, tiles: MemoryArchiveTiles, size: number) =>
  writeArchive(auditHashes, log, tiles, size, note, [note], HELD_ARCHIVE_LOCK, { crnGroupSize: GROUP });
const verify = (tiles: MemoryArchiveTiles) =>
  verifyArchive(auditHashes, tiles, [note], { crnGroupSize: GROUP });
/** The archive's checkpoint, opened: what the SAR's reader is handed. */
const treeOf = (tiles: MemoryArchiveTiles) =>
  openCheckpoint(new TextDecoder().decode(tiles.files.get('checkpoint')), [note], 'checkpoint').body;
const seqs = (tiles: MemoryArchiveTiles, crn: string, keys = [note]) =>
  archivedSeqsNaming(auditHashes, tiles, keys, treeOf(tiles), crn, GROUP);
const copyOf = (tiles: MemoryArchiveTiles) => {
  const copy = new MemoryArchiveTiles('memory:copy');
  for (const [path, bytes] of tiles.files) copy.files.set(path, bytes.slice());
  return copy;
};
const indexFiles = (tiles: MemoryArchiveTiles) =>
  [...tiles.files.keys()].filter((path) => path.startsWith('crn-index/')).sort();
const flipped = (tiles: MemoryArchiveTiles, path: string, at = 0) => {
  const bytes = tiles.files.get(path) as Uint8Array;
  bytes[at] = (bytes[at] as number) ^ 1;
};
/** The shard file of group `group` (full) that `crn` is in. */
const shardOf = (group: number, crn: string) =>
  `crn-index/${String(group).padStart(3, '0')}/${crnShardOf(auditHashes.sha256Hex, crn).toString(16)}`;

beforeAll(async () => {
  const keys = await generateCheckpointKeys();
  note = noteSigner(keys.privatePem, ORIGIN);
  signer = await checkpointSigner(keys.privatePem, ORIGIN);
  stranger = noteSigner((await generateCheckpointKeys()).privatePem, ORIGIN);
  const log = await trail();
  built = new MemoryArchiveTiles('memory:built');
  await archive(log, built, 768);
  await log.forget(768);
  await archive(log, built, 1792);
}, 60_000);
afterAll(() => {
  for (const log of logs) log.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the crn index of an archive', () => {
  it('lists exactly the archived records naming a crn, over full and partial groups and two runs', async () => {
    const log = await trail();
    const tiles = new MemoryArchiveTiles();
    const first = await archive(log, tiles, 768);
    // A full group (records 1..512) and a partial one (513..768, one bundle), 17 files each, and the note.
    expect(indexFiles(tiles)).toEqual(
      [
        ...['000', '001.p/1'].flatMap((group) =>
          [...Array.from({ length: CRN_SHARDS }, (_, s) => s.toString(16)), 'hashes'].map(
            (file) => `crn-index/${group}/${file}`,
          ),
        ),
        'crn-index/signed/768',
      ].sort(),
    );
    expect(first.files).toBe(3 + 4 + 35 + 1);
    // Each crn's line is in the shard of the first hex digit of SHA-256 of its UTF-8, as JSON.
    for (const crn of [CRN, ODD, 'A0']) {
      const shard = (createHash('sha256').update(crn, 'utf8').digest()[0] as number) >> 4;
      const line = `${JSON.stringify([crn, naming(crn, 512)])}\n`;
      expect(new TextDecoder().decode(tiles.files.get(`crn-index/000/${shard.toString(16)}`))).toContain(
        line,
      );
    }
    for (const crn of CRNS) expect([crn, await seqs(tiles, crn)]).toEqual([crn, naming(crn, 768)]);
    // The store lets go: the partial group's records are read back from the archive's bundle.
    await log.forget(768);
    await archive(log, tiles, 1792);
    expect(indexFiles(tiles)).toEqual(indexFiles(built));
    for (const group of ['001', '002', '003.p/1'])
      expect(tiles.files.has(`crn-index/${group}/hashes`)).toBe(true);
    const reader = await ArchiveReader.open(auditHashes, tiles, [note]);
    for (const crn of CRNS) {
      const found = await seqs(tiles, crn);
      expect([crn, found]).toEqual([crn, naming(crn, 1792)]);
      // And as a full scan of the archive's bundles finds them.
      expect(found).toEqual((await reader.query({ crn, limit: 10_000 })).map((r) => r.seq));
    }
    expect(await seqs(tiles, 'nobody')).toEqual([]);
    expect(await verify(tiles)).toMatchObject({ ok: true, records: 1792 });
  });

  it('refuses a changed shard file, and verify --archive names it', async () => {
    const tiles = copyOf(built);
    const shard = shardOf(1, CRN);
    flipped(tiles, shard, 3);
    await expect(seqs(tiles, CRN)).rejects.toThrow(
      `${shard} is not the shard crn-index/001/hashes lists: it was changed`,
    );
    expect(await verify(tiles)).toEqual({
      ok: false,
      reason: `crn index files that do not hold what the entries make: ${shard} changed`,
      files: [shard],
    });
  });

  it('refuses a changed hashes file, and verify --archive names it', async () => {
    const tiles = copyOf(built);
    // The hash of a shard the crn is not in: the note's digest over the hashes files finds it.
    flipped(tiles, 'crn-index/002/hashes', ((crnShardOf(auditHashes.sha256Hex, CRN) + 1) % CRN_SHARDS) * 32);
    await expect(seqs(tiles, CRN)).rejects.toThrow(/are not those crn-index\/signed\/1792 signs/);
    expect(await verify(tiles)).toMatchObject({ ok: false, files: ['crn-index/002/hashes'] });
  });

  it('refuses a removed shard file, saying audit archive writes it, and verify --archive names it missing', async () => {
    const tiles = copyOf(built);
    const shard = shardOf(0, CRN);
    tiles.files.delete(shard);
    await expect(seqs(tiles, CRN)).rejects.toThrow(
      `${shard} is missing from memory:copy: run case-read audit archive to write the archive's crn index`,
    );
    expect(await verify(tiles)).toEqual({
      ok: false,
      reason: `missing: ${shard} (the archive's crn index: the next case-read audit archive writes it)`,
      files: [shard],
    });
    // As it says: the next run, with nothing new to archive, writes it again (the same bytes).
    const log = await trail();
    expect(await archive(log, tiles, 1792)).toEqual({ from: 1792, to: 1792, files: 1 });
    expect(tiles.files.get(shard)).toEqual(built.files.get(shard));
    expect(await seqs(tiles, CRN)).toEqual(naming(CRN, 1792));
  });

  it('refuses a removed note, and verify --archive names it missing', async () => {
    const tiles = copyOf(built);
    tiles.files.delete('crn-index/signed/1792');
    await expect(seqs(tiles, CRN)).rejects.toThrow(
      "crn-index/signed/1792 is missing from memory:copy: run case-read audit archive to write the archive's crn index",
    );
    expect(await verify(tiles)).toMatchObject({ ok: false, files: ['crn-index/signed/1792'] });
  });

  it('refuses a note signed by another key, or one of another tree, and verify --archive names it', async () => {
    const path = 'crn-index/signed/1792';
    const text = noteTextOf(new TextDecoder().decode(built.files.get(path))) as string;
    const tiles = copyOf(built);
    tiles.files.set(path, new TextEncoder().encode(signNote(text, stranger)));
    await expect(seqs(tiles, CRN)).rejects.toThrow(
      /^crn-index\/signed\/1792: no signature on the note is by a key given/,
    );
    expect(await verify(tiles)).toEqual({
      ok: false,
      reason: `${path}: no signature on the note is by a key given`,
      files: [path],
    });
    // The key's own signature over the note of another tree (another root at this size) is not this archive's.
    const lines = text.split('\n');
    lines[3] = Buffer.alloc(32, 7).toString('base64');
    tiles.files.set(path, new TextEncoder().encode(signNote(lines.join('\n'), note)));
    await expect(seqs(tiles, CRN)).rejects.toThrow(
      /is not the crn index note of the archive's tree \(1792 records/,
    );
    expect(await verify(tiles)).toMatchObject({ ok: false, files: [path] });
  });

  it("verify --archive checks an earlier archive's index files too: its last group's, and its note", async () => {
    const earlierShard = `crn-index/001.p/1/${crnShardOf(auditHashes.sha256Hex, CRN).toString(16)}`;
    const tiles = copyOf(built);
    flipped(tiles, earlierShard, 2);
    expect(await verify(tiles)).toMatchObject({ ok: false, files: [earlierShard] });
    // Its note, signed by a key since rotated: kept, if it is the note of the index of 768 records.
    const path = 'crn-index/signed/768';
    const text = noteTextOf(new TextDecoder().decode(built.files.get(path))) as string;
    const rotated = copyOf(built);
    rotated.files.set(path, new TextEncoder().encode(signNote(text, stranger)));
    expect(await verify(rotated)).toMatchObject({ ok: true });
    const lines = text.split('\n');
    lines[4] = Buffer.alloc(32, 7).toString('base64');
    rotated.files.set(path, new TextEncoder().encode(signNote(lines.join('\n'), note)));
    expect(await verify(rotated)).toEqual({
      ok: false,
      reason: `${path} does not sign the crn index the entries make of 768 records: it was changed`,
      files: [path],
    });
  });

  it('is written whole by the next audit archive when the archive has none (as one written before it)', async () => {
    const log = await trail();
    const tiles = new MemoryArchiveTiles();
    await archive(log, tiles, 1024);
    const indexed = new Map([...tiles.files].filter(([path]) => path.startsWith('crn-index/')));
    for (const path of indexed.keys()) tiles.files.delete(path);
    expect(await verify(tiles)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /^missing: crn-index\/000\/0, .*\(the archive's crn index: the next case-read audit archive writes it\)$/,
      ),
    });
    await log.forget(1024);
    // Nothing new to archive: the index of what it holds is written all the same, as it was.
    expect(await archive(log, tiles, 1024)).toEqual({ from: 1024, to: 1024, files: indexed.size });
    expect(indexFiles(tiles)).toEqual([...indexed.keys()].sort());
    for (const [path, bytes] of indexed)
      expect([path, Buffer.from(tiles.files.get(path) as Uint8Array).equals(bytes)]).toEqual([path, true]);
    expect(await archive(log, tiles, 1024)).toEqual({ from: 1024, to: 1024, files: 0 });
    // And removed again, the next run that adds records writes it whole too, every group of the archive's bundles.
    for (const path of indexed.keys()) tiles.files.delete(path);
    await archive(log, tiles, 1792);
    for (const crn of CRNS) expect([crn, await seqs(tiles, crn)]).toEqual([crn, naming(crn, 1792)]);
    expect(await verify(tiles)).toMatchObject({ ok: true, records: 1792 });
  });

  it('is made of bundles checked against the stored tree: a changed bundle is refused, not indexed', async () => {
    const log = await trail();
    const tiles = new MemoryArchiveTiles();
    await archive(log, tiles, 768);
    for (const path of indexFiles(tiles)) tiles.files.delete(path);
    flipped(tiles, bundlePath(1), 100);
    await expect(archive(log, tiles, 768)).rejects.toThrow(
      /^tile\/entries\/001 is not what the stored tree holds of records 257\.\.512: it was changed/,
    );
    expect(indexFiles(tiles)).toEqual([]);
  });

  it('reads every line of a shard strictly', () => {
    const group = crnGroup(1, 2, GROUP);
    const read = (text: string) => seqsInShard(new TextEncoder().encode(text), 'B', group, 'crn-index/001/3');
    expect(read('["A",[513]]\n["B",[514,1024]]\n["C",[600]]\n')).toEqual([514, 1024]);
    expect(read('["A",[513]]\n')).toEqual([]);
    expect(read('')).toEqual([]);
    for (const [text, why] of [
      ['["B",[514]]', /its last line has no newline/],
      ['["B",[514]]\nnot json\n', /line 2 is not \["CRN",\[SEQ,…\]\]/],
      ['["B", [514]]\n', /line 1 is not/],
      ['["B",[514.0]]\n', /line 1 is not/],
      ['["B",[]]\n', /line 1 is not/],
      ['["B",[512]]\n', /line 1's seqs are not ascending within the group's records 513\.\.1024/],
      ['["B",[1025]]\n', /not ascending within/],
      ['["B",[600,514]]\n', /not ascending within/],
      ['["B",[514,514]]\n', /not ascending within/],
      ['["B",[514]]\n["B",[515]]\n', /line 2's crn does not come after line 1's/],
      ['["C",[514]]\n["B",[515]]\n', /line 2's crn does not come after line 1's/],
    ] as const) {
      expect(() => read(text), text).toThrow(why);
    }
  });

  it('is in groups of 65536 records unless told otherwise', async () => {
    const log = await trail();
    const tiles = new MemoryArchiveTiles();
    await writeArchive(auditHashes, log, tiles, 768, note, [note], HELD_ARCHIVE_LOCK);
    expect(indexFiles(tiles).filter((path) => path.endsWith('/hashes'))).toEqual([
      'crn-index/000.p/3/hashes',
    ]);
    expect(await archivedSeqsNaming(auditHashes, tiles, [note], treeOf(tiles), CRN)).toEqual(
      naming(CRN, 768),
    );
    expect(await verifyArchive(auditHashes, tiles, [note])).toMatchObject({ ok: true, records: 768 });
  });
});
