import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { spillFiles } from '../../../src/adapters/spill-file/spill-file.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { writeArchive } from '../../../src/app/audit/archive.js';
import { AuditCheckpointing } from '../../../src/app/audit/checkpointing.js';
import { type DisclosureSources, disclosuresOf } from '../../../src/app/audit/disclosures.js';
import { openCheckpoint } from '../../../src/app/audit/proving.js';
import { auditHashes, noteSigner } from '../../../src/app/composition/audit-keys.js';
import { auditEntryOf } from '../../../src/domain/audit/canonical-text.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { StoreUnavailableError, TrailIncompleteError } from '../../../src/domain/errors.js';
import type { CheckpointSigner } from '../../../src/ports/checkpoint-keys.js';
import type { Disclosure, DisclosureList } from '../../../src/ports/disclosures.js';
import type { OpenSpill } from '../../../src/ports/spill.js';
import {
  type Hash,
  inclusionRanges,
  leafHash,
  rangeHashes,
  storedIndexOf,
  subtreesOf,
  verifyInclusion,
} from '../../../src/tlog/merkle.js';
import { fromBase64 } from '../../../src/tlog/note.js';
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
  spill: spillFiles(),
  ...overrides,
});

/** An answer's disclosures and its proof's hashes, as its parts gave them. */
interface Sent {
  readonly disclosures: Disclosure[];
  readonly hashes: Uint8Array;
  readonly checkpoint: string | undefined;
}

async function sent(list: DisclosureList): Promise<Sent> {
  const disclosures: Disclosure[] = [];
  const pieces: Uint8Array[] = [];
  for await (const part of list.parts()) {
    if ('disclosures' in part) {
      expect(pieces).toEqual([]);
      disclosures.push(...part.disclosures);
    } else pieces.push(Uint8Array.from(part.hashes));
  }
  expect(disclosures).toHaveLength(list.count);
  return { disclosures, hashes: Buffer.concat(pieces), checkpoint: list.checkpoint };
}

async function answer(crn = CRN, window = {}, given = sources()): Promise<Sent> {
  return sent(await disclosuresOf(given).of(crn, window));
}

const all = async (crn = CRN, window = {}, given = sources()): Promise<Disclosure[]> =>
  (await answer(crn, window, given)).disclosures;

/**
 * Each disclosure proved as Go's tlog would prove it (ProveRecord over a HashReader of the
 * answer's hashes, then CheckRecord): the hashes are read as the stored indexes every
 * inclusion proof needs, each once, ascending; each proof is made of them and checked.
 */
function provedEach({ disclosures, hashes }: Sent, size: number, root: Hash): boolean[] {
  const wanted = new Set<number>();
  for (const d of disclosures)
    for (const range of inclusionRanges(d.index, size))
      for (const piece of subtreesOf(range)) wanted.add(storedIndexOf(piece));
  const order = [...wanted].sort((a, b) => a - b);
  expect(hashes.length).toBe(order.length * 32);
  const stored = new Map(order.map((index, k) => [index, hashes.subarray(k * 32, k * 32 + 32)]));
  return disclosures.map((d) => {
    const entry = fromBase64(d.entry) as Uint8Array;
    const proof = rangeHashes(auditHashes.sha256, inclusionRanges(d.index, size), stored);
    return verifyInclusion(
      auditHashes.sha256,
      d.index,
      size,
      leafHash(auditHashes.sha256, entry),
      proof,
      root,
    );
  });
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
  it('are exactly the records naming it, oldest first, each its exact bytes, all proved against the newest checkpoint', async () => {
    const given = await answer();
    const listed = given.disclosures;
    expect(listed.map((d) => d.requestId)).toEqual(expectedSeqs().map((i) => `req-${i}`));
    expect(listed.some((d) => Number(d.requestId.slice(4)) <= 512)).toBe(true);
    expect(listed.some((d) => Number(d.requestId.slice(4)) > 512)).toBe(true);
    const newest = await log.newestCheckpoint({ withNote: true });
    expect(given.checkpoint).toBe(newest?.note);
    const opened = openCheckpoint(given.checkpoint as string, [note], 'newest');
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
        index: seq - 1,
      });
    }
    expect(provedEach(given, opened.body.size, opened.body.root)).toEqual(listed.map(() => true));
    // Fewer hashes than one tlog-proof@v1 each would carry.
    expect(given.hashes.length / 32).toBeLessThan(listed.length * Math.ceil(Math.log2(opened.body.size)));
    // One entry or one hash changed: that disclosure, or those whose proofs read it, fail.
    const changed = Buffer.from(given.hashes);
    changed[5] = (changed[5] ?? 0) ^ 1;
    expect(provedEach({ ...given, hashes: changed }, opened.body.size, opened.body.root)).toContain(false);
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
    const given = await answer();
    expect(given.disclosures.length).toBeGreaterThan(0);
    expect(given.checkpoint?.endsWith(`${line}\n`)).toBe(true);
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
    expect(await refusal(all())).toMatch(/do not make the root/);
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

  it('after a key rotation, answer at once under the new key: its signature added to the newest checkpoint, nothing else signed', async () => {
    const keys = await generateCheckpointKeys();
    const rotated = await checkpointSigner(keys.privatePem, ORIGIN);
    const rotatedNote = noteSigner(keys.privatePem, ORIGIN);
    const before = await log.newestCheckpoint({ withNote: true });
    const checkpointing = new AuditCheckpointing({
      store: log,
      signer: rotated,
      everyRecords: 1000,
      everySeconds: 60,
      now: () => new Date(),
      out: { signed: () => {}, observed: () => {}, failed: () => {}, contradicted: () => {} },
    });
    // Serve's wiring: the answer's checkpoint must be the new key's; the archive, signed
    // before the rotation, opens with the old key's public half.
    const rotatedSources = sources({
      keys: [rotatedNote, note],
      signing: rotatedNote,
      checkpointNow: () => checkpointing.checkpointUnderThisKey(),
    });
    // Without the checkpointer (offline), the old key's checkpoint is refused for the new key.
    expect(
      await refusal(disclosuresOf(sources({ keys: [rotatedNote, note], signing: rotatedNote })).of(CRN, {})),
    ).toMatch(/no signature|key/);
    const given = await answer(CRN, {}, rotatedSources);
    expect(given.disclosures.map((d) => d.requestId)).toEqual(expectedSeqs().map((i) => `req-${i}`));
    const opened = openCheckpoint(given.checkpoint as string, [rotatedNote], 'answer');
    expect(opened.body.size).toBe(before?.seq);
    expect(provedEach(given, opened.body.size, opened.body.root)).toEqual(given.disclosures.map(() => true));
    // The same checkpoint, the new key's line added once; the next answer adds none.
    const after = await log.newestCheckpoint({ withNote: true });
    expect(after?.seq).toBe(before?.seq);
    expect(after?.cosignatures).toHaveLength(1);
    await answer(CRN, {}, rotatedSources);
    expect((await log.newestCheckpoint({ withNote: true }))?.cosignatures).toHaveLength(1);
    // Once the trail grows, the next checkpoint is the new key's own.
    await append(RECORDS + 1, RECORDS + 3);
    const grown = await answer(CRN, {}, rotatedSources);
    expect(openCheckpoint(grown.checkpoint as string, [rotatedNote], 'grown').body.size).toBe(RECORDS + 3);
    expect((await log.newestCheckpoint())?.keyId).toBe(rotated.keyId);
  });

  it("leave out what was appended after the check (the request's own record): the answer is as it was checked", async () => {
    const list = await disclosuresOf(sources()).of(CRN, {});
    await log.append(auditRecord(RECORDS + 7, { crn: CRN, at: at(RECORDS), requestId: 'req-after' }));
    const given = await sent(list);
    expect(given.disclosures.map((d) => d.requestId)).toEqual(expectedSeqs().map((i) => `req-${i}`));
  });

  it("stop reading once the request's deadline has passed (it was answered at the deadline)", async () => {
    const passed = { expiresAt: performance.now() - 1, passed: true, signal: AbortSignal.abort() };
    await expect(disclosuresOf(sources()).of(CRN, {}, passed)).rejects.toThrow(StoreUnavailableError);
  });

  it('break off, never end short, when the trail changed between the check and the sending', async () => {
    const list = await disclosuresOf(sources()).of(CRN, {});
    tiles.files.delete('tile/entries/001');
    const disclosures: Disclosure[] = [];
    await expect(
      (async () => {
        for await (const part of list.parts())
          if ('disclosures' in part) disclosures.push(...part.disclosures);
      })(),
    ).rejects.toThrow();
    expect(disclosures.length).toBeLessThan(list.count);
  });

  it('send the hashes pass one proved, and break off before closing when what was set aside changed', async () => {
    // A tile changed after the check: the hashes sent are still those proved (set aside), never made again.
    const list = await disclosuresOf(sources()).of(CRN, {});
    const upper = tiles.files.get('tile/1/000.p/2') as Uint8Array;
    upper[33] = (upper[33] ?? 0) ^ 1;
    const given = await sent(list);
    upper[33] = (upper[33] ?? 0) ^ 1;
    const opened = openCheckpoint(given.checkpoint as string, [note], 'newest');
    expect(provedEach(given, opened.body.size, opened.body.root)).toEqual(given.disclosures.map(() => true));
    // What was set aside read back changed: every disclosure sent, then broken off.
    const spills = spillFiles();
    const tampered: OpenSpill = async () => {
      const spill = await spills();
      return {
        append: (bytes) => spill.append(bytes),
        close: () => spill.close(),
        pieces: async function* (size) {
          for await (const piece of spill.pieces(size)) {
            const changed = Uint8Array.from(piece);
            changed[0] = (changed[0] ?? 0) ^ 1;
            yield changed;
          }
        },
      };
    };
    const parts: string[] = [];
    const why = await refusal(
      (async () => {
        const changed = await disclosuresOf(sources({ spill: tampered })).of(CRN, {});
        for await (const part of changed.parts())
          parts.push('disclosures' in part ? 'disclosures' : 'hashes');
      })(),
    );
    expect(why).toMatch(/set aside were changed/);
    expect(parts).toContain('disclosures');
    expect(parts).toContain('hashes');
  });
});
