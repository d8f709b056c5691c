import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { AuditArchiveError, assertArchiveHolds, writeArchive } from '../../../src/app/audit/archive.js';
import { ArchiveReader } from '../../../src/app/audit/archive-reader.js';
import { verifyArchive } from '../../../src/app/audit/archive-verify.js';
import { proveConsistency, proveInclusion } from '../../../src/app/audit/proving.js';
import { auditHashes, noteSigner } from '../../../src/app/composition/audit-keys.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { leafHash, verifyInclusion } from '../../../src/tlog/merkle.js';
import { bundlePath } from '../../../src/tlog/tiles.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { MemoryArchiveTiles } from '../../contract/memory-archive-tiles.js';
import { HELD_ARCHIVE_LOCK } from '../../support/audit.js';

/**
 * The archive's writer, verifier and reader over the port alone (src/ports/archive-tiles.ts):
 * an archive kept in memory, no file of it on a disk. And the one prover: a record proved from
 * the archive's tiles and from the store's table is the same proof.
 */

const ORIGIN = 'case-read.test.example/audit';
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const dir = mkdtempSync(join(tmpdir(), 'case-read-archive-port-'));
let log: SqliteAuditLog;
let note: ReturnType<typeof noteSigner>;
afterAll(() => {
  log?.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  const keys = await generateCheckpointKeys();
  note = noteSigner(keys.privatePem, ORIGIN);
  const signer = await checkpointSigner(keys.privatePem, ORIGIN);
  log = SqliteAuditLog.open(join(dir, 'audit.db'));
  for (let i = 1; i <= 600; i++) void log.append(auditRecord(i));
  await log.flush();
  const grown = await log.growTree();
  await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
}, 60_000);

describe('the archive over the port, in memory', () => {
  it('is written, verified and read without a disk', async () => {
    const tiles = new MemoryArchiveTiles();
    // Its crn index (src/app/audit/crn-index.ts): the 16 shards and hashes of a partial group of
    // two bundles, and the note of its size.
    const index = [
      ...[...'0123456789abcdef', 'hashes'].map((file) => `crn-index/000.p/2/${file}`),
      'crn-index/signed/512',
    ];
    expect(await writeArchive(auditHashes, log, tiles, 512, note, [note], HELD_ARCHIVE_LOCK)).toEqual({
      from: 0,
      to: 512,
      files: 6 + index.length,
    });
    expect([...tiles.files.keys()].sort()).toEqual(
      [
        'checkpoint',
        'tile/0/000',
        'tile/0/001',
        'tile/1/000.p/2',
        'tile/entries/000',
        'tile/entries/001',
        ...index,
      ].sort(),
    );
    await expect(assertArchiveHolds(tiles, 0, 512)).resolves.toBeUndefined();
    expect(await verifyArchive(auditHashes, tiles, [note])).toEqual({
      ok: true,
      records: 512,
      files: 6 + index.length,
    });
    // Again: nothing new, and the writer of the first run was closed (one at a time).
    expect(await writeArchive(auditHashes, log, tiles, 512, note, [note], HELD_ARCHIVE_LOCK)).toEqual({
      from: 512,
      to: 512,
      files: 0,
    });
    const reader = await ArchiveReader.open(auditHashes, tiles, [note]);
    expect((await reader.query({ requestId: 'req-300' })).map((r) => r.seq)).toEqual([300]);
  });

  it('names a changed file, as on a disk', async () => {
    const tiles = new MemoryArchiveTiles('memory:changed');
    await writeArchive(auditHashes, log, tiles, 512, note, [note], HELD_ARCHIVE_LOCK);
    const bundle = tiles.files.get(bundlePath(1)) as Uint8Array;
    bundle[40] = (bundle[40] as number) ^ 1;
    expect(await verifyArchive(auditHashes, tiles, [note])).toMatchObject({
      ok: false,
      files: ['tile/entries/001'],
    });
    tiles.files.delete('tile/0/000');
    expect(await verifyArchive(auditHashes, tiles, [note])).toEqual({
      ok: false,
      reason: 'missing: tile/0/000',
      files: ['tile/0/000'],
    });
    await expect(assertArchiveHolds(tiles, 0, 768)).rejects.toThrow(
      /^memory:changed lacks tile\/entries\/002: the store keeps those records/,
    );
  });

  it('refuses a file already there with other bytes, and closes its writer', async () => {
    const tiles = new MemoryArchiveTiles('memory:taken');
    tiles.files.set('tile/entries/000', new TextEncoder().encode('another log'));
    await expect(writeArchive(auditHashes, log, tiles, 256, note, [note], HELD_ARCHIVE_LOCK)).rejects.toThrow(
      new AuditArchiveError(
        'tile/entries/000 is already in memory:taken with other content: an archive file is never rewritten',
      ),
    );
    expect(tiles.files.has('checkpoint')).toBe(false);
    tiles.files.delete('tile/entries/000');
    expect((await writeArchive(auditHashes, log, tiles, 256, note, [note], HELD_ARCHIVE_LOCK)).to).toBe(256);
  });
});

describe('one prover, two sources of hashes', () => {
  it('proves a record from the archive’s tiles as from the store’s table, to the byte', async () => {
    const tiles = new MemoryArchiveTiles();
    await writeArchive(auditHashes, log, tiles, 512, note, [note], HELD_ARCHIVE_LOCK);
    const reader = await ArchiveReader.open(auditHashes, tiles, [note]);
    for (const seq of [1, 256, 257, 300, 512]) {
      const archived = await reader.prove(seq);
      const stored = await proveInclusion(auditHashes, log, seq, reader.checkpoint);
      expect(archived.proof.map(hex)).toEqual(stored.proof.map(hex));
      expect(hex(archived.entry)).toEqual(hex(stored.entry));
      const leaf = leafHash(auditHashes.sha256, archived.entry);
      expect(
        verifyInclusion(auditHashes.sha256, seq - 1, 512, leaf, archived.proof, reader.checkpoint.root),
      ).toBe(true);
    }
    for (const oldSize of [1, 100, 256, 511, 512])
      expect((await reader.proveConsistency(oldSize)).map(hex)).toEqual(
        (await proveConsistency(auditHashes, log, oldSize, 512, reader.checkpoint)).map(hex),
      );
  });

  it('refuses a proof the archive’s tiles do not make the signed root of', async () => {
    const tiles = new MemoryArchiveTiles();
    await writeArchive(auditHashes, log, tiles, 512, note, [note], HELD_ARCHIVE_LOCK);
    const partial = tiles.files.get('tile/1/000.p/2') as Uint8Array;
    partial[0] = (partial[0] as number) ^ 1;
    const reader = await ArchiveReader.open(auditHashes, tiles, [note]);
    await expect(reader.prove(300)).rejects.toThrow(
      /^record 300 as archived is not the leaf the archive's checkpoint signed/,
    );
  });
});
