import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { writeArchive } from '../../../src/app/audit/archive.js';
import { type DisclosureSources, disclosuresOf } from '../../../src/app/audit/disclosures.js';
import { openCheckpoint } from '../../../src/app/audit/proving.js';
import { auditHashes, noteSigner } from '../../../src/app/composition/audit-keys.js';
import { auditEntryOf } from '../../../src/domain/audit/canonical-text.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { StoreUnavailableError, TrailIncompleteError } from '../../../src/domain/errors.js';
import type { CheckpointSigner } from '../../../src/ports/checkpoint-keys.js';
import type { Disclosure } from '../../../src/ports/disclosures.js';
import { leafHash, verifyInclusion } from '../../../src/tlog/merkle.js';
import { fromBase64 } from '../../../src/tlog/note.js';
import { parseTlogProof } from '../../../src/tlog/tlog-proof.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { MemoryArchiveTiles } from '../../contract/memory-archive-tiles.js';
import { HELD_ARCHIVE_LOCK } from '../../support/audit.js';

/**
 * The disclosures of one crn (decisions §22) from a SQLite trail and its archive: exactly the
 * records naming it, each with its exact bytes and a proof that checks against the store's
 * newest signed checkpoint; complete or nothing otherwise.
 */

const ORIGIN = 'case-read.test.example/audit';
const CRN = 'X123456';
const RECORDS = 700;
/** Records naming the crn: every seventh, the rest another's or none. */
const names = (i: number) => (i % 7 === 0 ? CRN : i % 5 === 0 ? null : 'A000001');
const at = (i: number) => new Date(Date.UTC(2026, 0, 1 + Math.floor(i / 10), 12));

let dir: string;
let log: SqliteAuditLog;
let tiles: MemoryArchiveTiles;
let signer: CheckpointSigner;
let note: ReturnType<typeof noteSigner>;

async function checkpointNow(): Promise<void> {
  const grown = await log.growTree();
  if (grown.root) await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
}

async function append(from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++)
    await log.append(auditRecord(i, { crn: names(i), at: at(i), requestId: `req-${i}` }));
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-disclosures-'));
  log = SqliteAuditLog.open(join(dir, 'audit.db'));
  const keys = await generateCheckpointKeys();
  signer = await checkpointSigner(keys.privatePem, ORIGIN);
  note = noteSigner(keys.privatePem, ORIGIN);
  tiles = new MemoryArchiveTiles();
  await append(1, RECORDS);
  await checkpointNow();
  // Records 1..512 archived, and let go of by the store.
  await writeArchive(auditHashes, log, tiles, 512, note, [note], HELD_ARCHIVE_LOCK);
  await log.forget(512);
});

afterEach(() => {
  log.close();
  rmSync(dir, { recursive: true, force: true });
});

const sources = (overrides: Partial<DisclosureSources> = {}): DisclosureSources => ({
  hashes: auditHashes,
  log,
  keys: [note],
  archive: tiles,
  ...overrides,
});

async function all(crn = CRN, window = {}, given = sources()): Promise<Disclosure[]> {
  const list = await disclosuresOf(given).of(crn, window);
  const out: Disclosure[] = [];
  for await (const batch of list.batches()) out.push(...batch);
  expect(out).toHaveLength(list.count);
  return out;
}

/** Why the disclosures were refused: a TrailIncompleteError's reason. */
async function refusal(listing: Promise<unknown>): Promise<string> {
  const error = await listing.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TrailIncompleteError);
  return (error as TrailIncompleteError).reason;
}

const expectedSeqs = (from = 1, to = RECORDS) =>
  Array.from({ length: to - from + 1 }, (_, k) => from + k).filter((i) => names(i) === CRN);

describe('the disclosures of a crn, from the store and the archive', () => {
  it('are exactly the records naming it, oldest first, each its exact bytes and a proof against the newest checkpoint', async () => {
    const listed = await all();
    expect(listed.map((d) => d.requestId)).toEqual(expectedSeqs().map((i) => `req-${i}`));
    expect(listed.some((d) => Number(d.requestId.slice(4)) <= 512)).toBe(true);
    expect(listed.some((d) => Number(d.requestId.slice(4)) > 512)).toBe(true);
    const newest = await log.newestCheckpoint({ withNote: true });
    const opened = openCheckpoint(newest?.note as string, [note], 'newest');
    for (const d of listed) {
      const seq = Number(d.requestId.slice(4));
      const entry = fromBase64(d.entry) as Uint8Array;
      const record = auditRecord(seq, { crn: CRN, at: at(seq), requestId: `req-${seq}` });
      expect(new TextDecoder().decode(entry)).toContain(`req-${seq}`);
      expect(d).toMatchObject({
        time: record.at.toISOString(),
        recipient: record.clientId,
        operation: record.operation,
        onBehalfOf: record.onBehalfOf,
        status: record.status,
      });
      const proof = parseTlogProof(d.proof);
      if ('invalid' in proof) throw new Error(proof.invalid);
      expect(proof.index).toBe(seq - 1);
      expect(proof.checkpoint).toBe(newest?.note);
      expect(
        verifyInclusion(
          auditHashes.sha256,
          proof.index,
          opened.body.size,
          leafHash(auditHashes.sha256, entry),
          [...proof.hashes],
          opened.body.root,
        ),
      ).toBe(true);
    }
    // The store's own entry text for one it still holds is the entry given.
    const held = (await log.query({ requestId: `req-${RECORDS}` }))[0];
    if (held && held.crn === CRN) {
      expect(listed.at(-1)?.entry).toBe(Buffer.from(auditEntryOf(held) as string).toString('base64'));
    }
  });

  it("carry the checkpoint with the witnesses' cosignatures held for it", async () => {
    const newest = await log.newestCheckpoint({ withNote: true });
    if (newest === undefined) throw new Error('no checkpoint');
    const line = `— witness.example/w1 ${Buffer.alloc(76, 7).toString('base64')}`;
    await log.addCosignatures(newest, [line]);
    const listed = await all();
    expect(listed.length).toBeGreaterThan(0);
    for (const d of listed) expect(d.proof.endsWith(`${line}\n`)).toBe(true);
  });

  it('keep to the window, from inclusive, to exclusive', async () => {
    const from = at(300);
    const to = at(600);
    const listed = await all(CRN, { from, to });
    const inside = expectedSeqs().filter((i) => at(i) >= from && at(i) < to);
    expect(listed.map((d) => d.requestId)).toEqual(inside.map((i) => `req-${i}`));
  });

  it('of a crn never named: none', async () => {
    expect(await all('Z999999')).toEqual([]);
  });

  it('are refused, not shortened, when the store let go of records and no archive is given', async () => {
    await expect(all(CRN, {}, sources({ archive: undefined }))).rejects.toThrow(TrailIncompleteError);
  });

  it('are refused when an archived bundle or tile was changed, or the index is missing', async () => {
    const tile = tiles.files.get('tile/0/000') as Uint8Array;
    tile[40] = (tile[40] ?? 0) ^ 1;
    await expect(all()).rejects.toThrow(TrailIncompleteError);
    tile[40] = (tile[40] ?? 0) ^ 1;
    expect((await all()).length).toBe(expectedSeqs().length);
    // A hash above the bundles (the level-1 tile): only the proof against the signed root sees it.
    const upper = tiles.files.get('tile/1/000.p/2') as Uint8Array;
    upper[33] = (upper[33] ?? 0) ^ 1;
    expect(await refusal(all())).toMatch(/does not verify/);
    upper[33] = (upper[33] ?? 0) ^ 1;
    for (const path of [...tiles.files.keys()]) if (path.startsWith('crn-index/')) tiles.files.delete(path);
    expect(await refusal(all())).toMatch(/crn index/);
  });

  it('are refused when the checkpoint is not signed by the keys given', async () => {
    const other = noteSigner((await generateCheckpointKeys()).privatePem, ORIGIN);
    await expect(all(CRN, {}, sources({ keys: [other] }))).rejects.toThrow(TrailIncompleteError);
  });

  it('ask for a checkpoint when a record is newer than the newest, and are refused without one', async () => {
    await append(RECORDS + 1, RECORDS + 14);
    expect(await refusal(all())).toMatch(/after the newest signed checkpoint/);
    let asked = 0;
    const listed = await all(
      CRN,
      {},
      sources({
        checkpointNow: async () => {
          asked++;
          await checkpointNow();
        },
      }),
    );
    expect(asked).toBe(1);
    expect(listed.map((d) => d.requestId)).toEqual(expectedSeqs(1, RECORDS + 14).map((i) => `req-${i}`));
  });

  it("leave out what was appended after the check (the request's own record): the answer is as it was checked", async () => {
    const list = await disclosuresOf(sources()).of(CRN, {});
    await log.append(auditRecord(RECORDS + 7, { crn: CRN, at: at(RECORDS), requestId: 'req-after' }));
    const sent: Disclosure[] = [];
    for await (const batch of list.batches()) sent.push(...batch);
    expect(sent.map((d) => d.requestId)).toEqual(expectedSeqs().map((i) => `req-${i}`));
  });

  it("stop reading once the request's deadline has passed (it was answered at the deadline)", async () => {
    const passed = { expiresAt: performance.now() - 1, passed: true, signal: AbortSignal.abort() };
    await expect(disclosuresOf(sources()).of(CRN, {}, passed)).rejects.toThrow(StoreUnavailableError);
  });

  it('break off, never end short, when the trail changed between the check and the sending', async () => {
    const list = await disclosuresOf(sources()).of(CRN, {});
    tiles.files.delete('tile/entries/001');
    const sent: Disclosure[] = [];
    await expect(
      (async () => {
        for await (const batch of list.batches()) sent.push(...batch);
      })(),
    ).rejects.toThrow();
    expect(sent.length).toBeLessThan(list.count);
  });
});
