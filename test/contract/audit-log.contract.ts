import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Bytes } from '../../src/adapters/shared/sha256.js';
import { auditEntryOf } from '../../src/domain/audit/canonical-text.js';
import { GENESIS_HASH } from '../../src/domain/audit/chain.js';
import { type AuditCheckpoint, CheckpointSet } from '../../src/domain/audit/checkpoint.js';
import type { AuditRecord, StoredAuditRecord } from '../../src/domain/audit/record.js';
import type { AuditLog, TimeWindow } from '../../src/ports/audit-log.js';
import {
  consistencyRanges,
  inclusionRanges,
  rangeHashes,
  storedIndexesFor,
  storedIndexOf,
  verifyConsistency,
  verifyInclusion,
} from '../../src/tlog/merkle.js';
import { grownAndReferenceRoots, referenceRoot } from '../support/merkle-reference.js';

export interface OpenedAuditLog {
  readonly log: AuditLog;
  close(): Promise<void>;
}

/** One store under test, fresh for each test: the adapter's own way to reach it. */
export interface AuditStoreHarness {
  /** A new connection to the store (several may be open at once: several writers). */
  open(): Promise<OpenedAuditLog>;
  /** Changes or removes a stored record behind the store's back, as someone with write access to it would. */
  tamper(change: AuditTamper): Promise<void>;
  /** From now on every insert fails, as on a full disk; `allowWrites` undoes it. */
  refuseWrites(): Promise<void>;
  allowWrites(): Promise<void>;
  dispose(): Promise<void>;
  /**
   * For a store that keeps a schema (SQLite, PostgreSQL): `build` makes the store as the
   * release before this one left it (every migration but the last, the continuations'), holding
   * `checkpoint`; `migrate` then migrates it as `case-read stores migrate` does (the kind's
   * `migrate`), saying its version before and after and the one this release knows.
   */
  readonly previous?: {
    build(checkpoint: AuditCheckpoint): Promise<void>;
    migrate(): Promise<{ readonly before: number; readonly after: number; readonly current: number }>;
  };
}

export interface AuditContractOptions {
  /**
   * `many` (the default): several writers may append to one store at once and form one
   * chain. `one`: while one writer holds the store a second is refused, and the next writer
   * continues the chain.
   */
  readonly writers?: 'one' | 'many';
  /** Whether the store lets go of archived records (decisions §15); the JSONL store refuses. */
  readonly archives?: boolean;
}

/** A change made to the stored trail by someone other than the service. */
export type AuditTamper =
  | {
      readonly seq: number;
      readonly set: Partial<
        Pick<StoredAuditRecord, 'status' | 'crn' | 'hash' | 'issued' | 'continuation' | 'version'>
      >;
    }
  | { readonly seq: number; readonly remove: true };

/** A text or NULL as an SQL literal. */
const sqlText = (text: string | null) => (text === null ? 'NULL' : `'${text.replaceAll("'", "''")}'`);

/** The SQL a SQL store's harness runs for a change (the `audit` table of both SQL stores). */
export function tamperSql(change: AuditTamper): string {
  if ('remove' in change) return `DELETE FROM audit WHERE seq = ${change.seq}`;
  const { status, crn, hash, issued, continuation, version } = change.set;
  const sets = [
    status === undefined ? undefined : `status = ${status}`,
    crn === undefined ? undefined : `crn = '${crn}'`,
    hash === undefined ? undefined : `hash = '${hash}'`,
    issued === undefined ? undefined : `issued = ${sqlText(issued)}`,
    continuation === undefined ? undefined : `continuation = ${sqlText(continuation)}`,
    version === undefined ? undefined : `version = ${version}`,
  ].filter(Boolean);
  return `UPDATE audit SET ${sets.join(', ')} WHERE seq = ${change.seq}`;
}

export const auditRecord = (i: number, overrides: Partial<AuditRecord> = {}): AuditRecord => ({
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  requestId: `req-${i}`,
  clientId: i % 2 ? 'client-a' : 'client-b',
  certificateSerial: 'AB12',
  onBehalfOf: i === 3 ? 'officer@probation.example' : null,
  operation: 'getCase',
  crn: i % 3 ? 'X123456' : 'A000001',
  status: i === 4 ? 403 : 200,
  problem: i === 4 ? 'limited-access' : null,
  access: i === 5 ? 'client-enforces' : null,
  issued: null,
  ...overrides,
});

/**
 * A statement as a continuation record carries it (the store keeps it as text and never reads
 * it: its format and signature are checked elsewhere), told apart by `n`: several lines,
 * quotes and a character outside ASCII, as a signed note and an operator's reason may hold.
 */
export const continuationStatement = (n: number): string =>
  `case-read trail continuation/v1\norigin case-read.invalid/audit/${n}\nprevious case-read.invalid/audit\nkept ${n}\nheld ${n + 2}\nlast-kept none\nbreak 2026-01-01T00:00:00.000Z\nreason restored from the "04:00" backup (INC-12${n}) — lost\n\n— case-read.invalid/audit/${n} AAAAAQ==\n`;

/** A continuation record as `case-read audit continue` appends it: no client request, no crn. */
export const continuationRecord = (i: number, n = i): AuditRecord =>
  auditRecord(i, {
    clientId: 'case-read audit continue',
    certificateSerial: '',
    onBehalfOf: null,
    operation: 'continueTrail',
    crn: null,
    status: 200,
    problem: null,
    access: null,
    issued: null,
    continuation: continuationStatement(n),
  });

/** A checkpoint as the store keeps it (the signature is checked elsewhere, not by the store). */
export const checkpointAt = (seq: number, head: string, signature = 'c2lnbmF0dXJl'): AuditCheckpoint => ({
  seq,
  head,
  time: `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z`,
  keyId: 'key-one',
  signature,
});

/** A cosignature line as a witness gives it (`— NAME BASE64(key id ‖ time ‖ signature)`), told apart by `n`. */
export const cosignatureLine = (name: string, n: number): string =>
  `— ${name} ${Buffer.alloc(76, n).toString('base64')}`;

/** Reads every stored checkpoint. */
async function allCheckpoints(log: AuditLog): Promise<unknown[]> {
  const read: unknown[] = [];
  for await (const c of log.checkpoints()) read.push(c);
  return read;
}

/**
 * The contract of the audit log port (see src/ports/audit-log.ts), run by every adapter.
 * `store` gives a fresh, empty store for each test.
 */
export function describeAuditLogContract(
  name: string,
  store: () => Promise<AuditStoreHarness>,
  { writers = 'many', archives = true }: AuditContractOptions = {},
): void {
  describe(`AuditLog contract: ${name}`, () => {
    let harness: AuditStoreHarness;
    const opened: OpenedAuditLog[] = [];
    const open = async () => {
      const o = await harness.open();
      opened.push(o);
      return o.log;
    };
    beforeAll(async () => {
      harness = await store();
    });
    afterAll(async () => {
      for (const o of opened.splice(0)) await o.close().catch(() => {});
      await harness.dispose();
    });
    const fresh = async () => {
      for (const o of opened.splice(0)) await o.close();
      await harness.dispose();
      harness = await store();
    };

    it('numbers records in order and continues the chain after reopening', async () => {
      await fresh();
      const first = await harness.open();
      for (let i = 1; i <= 3; i++) await first.log.append(auditRecord(i));
      await first.close();
      const again = await open();
      await again.append(auditRecord(4));
      const all = await again.query({});
      expect(all.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
      expect(all[3]?.previousHash).toBe(all[2]?.hash);
      expect(all[0]?.previousHash).toBe('0'.repeat(64));
      expect(all[2]).toStrictEqual({
        ...auditRecord(3),
        version: 4,
        seq: 3,
        previousHash: all[1]?.hash,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(await again.verify()).toEqual({ ok: true, records: 4 });
      // The problem type and the limited-access marking are stored and read back.
      await again.append(auditRecord(5));
      const marked = await again.query({});
      expect(marked.map((r) => [r.problem, r.access])).toEqual([
        [null, null],
        [null, null],
        [null, null],
        ['limited-access', null],
        [null, 'client-enforces'],
      ]);
      expect(await again.verify()).toEqual({ ok: true, records: 5 });
      // The serial of a certificate issued to the request (format version 3) likewise.
      const renewal = auditRecord(6, { operation: 'renewCertificate', crn: null, issued: '7F3A9C00E1' });
      await again.append(renewal);
      const withIssued = await again.query({});
      expect(withIssued.map((r) => r.issued)).toEqual([null, null, null, null, null, '7F3A9C00E1']);
      expect(withIssued[5]).toStrictEqual({
        ...renewal,
        version: 4,
        seq: 6,
        previousHash: withIssued[4]?.hash,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(await again.verify()).toEqual({ ok: true, records: 6 });
      // And the hash covers it: a record that claims another certificate does not verify.
      await harness.tamper({ seq: 6, set: { issued: '7F3A9C00E2' } });
      expect(await again.verify()).toMatchObject({
        ok: false,
        brokenAt: 6,
        reason: expect.stringMatching(/changed/),
      });
    });

    it('queries by client, crn and time, oldest first, with a limit', async () => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 6; i++) await log.append(auditRecord(i));
      const seqs = async (q: Parameters<AuditLog['query']>[0]) => (await log.query(q)).map((r) => r.seq);
      expect(await seqs({ clientId: 'client-a' })).toEqual([1, 3, 5]);
      expect(await seqs({ crn: 'A000001' })).toEqual([3, 6]);
      expect(await seqs({ since: auditRecord(4).at })).toEqual([4, 5, 6]);
      expect(await seqs({ clientId: 'client-b', since: auditRecord(3).at })).toEqual([4, 6]);
      expect(await seqs({ limit: 2 })).toEqual([1, 2]);
      expect(await seqs({ clientId: 'nobody' })).toEqual([]);
    });

    /** Every record `recordsNaming` gives, its batches flattened, each batch neither empty nor over 1000. */
    const naming = async (log: AuditLog, crn: string, window?: TimeWindow) => {
      const out: StoredAuditRecord[] = [];
      for await (const batch of log.recordsNaming(crn, window)) {
        expect(batch.length).toBeGreaterThan(0);
        expect(batch.length).toBeLessThanOrEqual(1000);
        out.push(...batch);
      }
      return out;
    };
    const seqsNaming = async (log: AuditLog, crn: string, window?: TimeWindow) =>
      (await naming(log, crn, window)).map((r) => r.seq);

    it("gives exactly one crn's records, in seq order, every field as appended", async () => {
      await fresh();
      const log = await open();
      // Two crns and records naming none, interleaved; times out of seq order (the index is by time).
      const crnOf = (i: number) => (i % 3 === 0 ? null : i % 2 ? 'X123456' : 'A000001');
      const appended = Array.from({ length: 12 }, (_, k) =>
        auditRecord(k + 1, { crn: crnOf(k + 1), at: new Date(Date.UTC(2026, 0, 1, 0, 0, 13 - k)) }),
      );
      for (const record of appended) await log.append(record);
      const stored = await log.query({});
      const x = await naming(log, 'X123456');
      expect(x.map((r) => r.seq)).toEqual([1, 5, 7, 11]);
      expect(x).toEqual([1, 5, 7, 11].map((seq) => stored[seq - 1]));
      for (const r of x) expect(r).toMatchObject({ ...appended[r.seq - 1], seq: r.seq });
      expect(await seqsNaming(log, 'A000001')).toEqual([2, 4, 8, 10]);
      expect(await seqsNaming(log, 'A000001', {})).toEqual([2, 4, 8, 10]);
      // A crn with no records: no batch at all.
      let batches = 0;
      for await (const _ of log.recordsNaming('Z999999')) batches++;
      expect(batches).toBe(0);
    });

    it("gives a crn's records inside a window: from its start, before its end, either end open", async () => {
      await fresh();
      const log = await open();
      // Times out of seq order: record i at second 20 - i, so later records are earlier.
      const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 20 - i));
      for (let i = 1; i <= 12; i++)
        await log.append(auditRecord(i, { at: at(i), crn: i % 3 ? 'X123456' : null }));
      const ms = (date: Date, plus: number) => new Date(date.getTime() + plus);
      // X123456: 1, 2, 4, 5, 7, 8, 10, 11 (at seconds 19, 18, 16, 15, 13, 12, 10, 9).
      expect(await seqsNaming(log, 'X123456', { from: at(5) })).toEqual([1, 2, 4, 5]);
      expect(await seqsNaming(log, 'X123456', { from: ms(at(5), 1) })).toEqual([1, 2, 4]);
      expect(await seqsNaming(log, 'X123456', { to: at(5) })).toEqual([7, 8, 10, 11]);
      expect(await seqsNaming(log, 'X123456', { to: ms(at(5), 1) })).toEqual([5, 7, 8, 10, 11]);
      expect(await seqsNaming(log, 'X123456', { from: at(8), to: at(2) })).toEqual([4, 5, 7, 8]);
      expect(await seqsNaming(log, 'X123456', { from: at(5), to: at(5) })).toEqual([]);
      expect(await seqsNaming(log, 'X123456', { from: at(1), to: ms(at(1), 1) })).toEqual([1]);
      expect(await seqsNaming(log, 'X123456', { to: at(11) })).toEqual([]);
      expect(await seqsNaming(log, 'X123456', { from: ms(at(1), 1) })).toEqual([]);
    });

    it("reads more than one batch of a crn's records with none lost or repeated", async () => {
      await fresh();
      const log = await open();
      const at = (k: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, k));
      const records = Array.from({ length: 2300 }, (_, k) =>
        auditRecord(k + 1, { crn: k % 10 === 9 ? 'A000001' : k % 10 === 4 ? null : 'X123456', at: at(k) }),
      );
      await Promise.all(records.map((record) => log.append(record)));
      let batches = 0;
      const seqs: number[] = [];
      for await (const batch of log.recordsNaming('X123456')) {
        batches++;
        seqs.push(...batch.map((r) => r.seq));
      }
      expect(batches).toBeGreaterThanOrEqual(2);
      const expected = Array.from({ length: 2300 }, (_, k) => k + 1).filter(
        (i) => i % 10 !== 0 && i % 10 !== 5,
      );
      expect(seqs).toEqual(expected);
      // A window across the batches' edges.
      expect(await seqsNaming(log, 'X123456', { from: at(999), to: at(2101) })).toEqual(
        expected.filter((i) => i >= 1000 && i <= 2101),
      );
    });

    it("finds a crn's records appended since it was last asked, and after the store is opened again", async () => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 6; i++) await log.append(auditRecord(i));
      expect(await seqsNaming(log, 'X123456')).toEqual([1, 2, 4, 5]);
      for (let i = 7; i <= 9; i++) await log.append(auditRecord(i));
      expect(await seqsNaming(log, 'X123456')).toEqual([1, 2, 4, 5, 7, 8]);
      expect(await seqsNaming(log, 'A000001')).toEqual([3, 6, 9]);
      for (const o of opened.splice(0)) await o.close();
      const again = await open();
      expect(await seqsNaming(again, 'X123456')).toEqual([1, 2, 4, 5, 7, 8]);
      await again.append(auditRecord(10));
      expect(await seqsNaming(again, 'X123456')).toEqual([1, 2, 4, 5, 7, 8, 10]);
    });

    it.skipIf(writers !== 'many')(
      'gives the same records of a crn from each of two instances appending to one trail at once',
      async () => {
        await fresh();
        const [one, two] = [await open(), await open()];
        await Promise.all(
          Array.from({ length: 90 }, (_, k) => (k % 2 ? one : two).append(auditRecord(k + 1))),
        );
        const stored = (await one.query({ limit: 100 })).filter((r) => r.crn === 'X123456');
        expect(stored).toHaveLength(60);
        expect(await naming(one, 'X123456')).toEqual(stored);
        expect(await naming(two, 'X123456')).toEqual(stored);
      },
    );

    it.each<[string, AuditTamper, number, RegExp]>([
      ['a changed status', { seq: 2, set: { status: 404 } }, 2, /changed/],
      ['a removed record', { seq: 2, remove: true }, 3, /missing/],
      ['a rewritten crn', { seq: 3, set: { crn: 'Z999999' } }, 3, /changed/],
      ['a re-hashed record', { seq: 4, set: { hash: 'a'.repeat(64) } }, 4, /changed/],
    ])('verify names the first bad record: %s', async (_label, change, brokenAt, reason) => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 5; i++) await log.append(auditRecord(i));
      await harness.tamper(change);
      const result = await log.verify();
      expect(result.ok).toBe(false);
      expect(result).toMatchObject({ brokenAt, reason: expect.stringMatching(reason) });
    });

    it('gives the head of the chain: seq 0 and the genesis hash when empty, else the last record', async () => {
      await fresh();
      const log = await open();
      expect(await log.head()).toEqual({ seq: 0, hash: GENESIS_HASH });
      for (let i = 1; i <= 3; i++) await log.append(auditRecord(i));
      const last = (await log.query({})).at(-1);
      expect(await log.head()).toEqual({ seq: 3, hash: last?.hash });
    });

    it('flush resolves once every append made before it is stored', async () => {
      await fresh();
      const log = await open();
      const appends = [1, 2, 3].map((i) => log.append(auditRecord(i)));
      await log.flush();
      expect((await log.head()).seq).toBe(3);
      await Promise.all(appends);
    });

    it('stores checkpoints and reads them back, lowest seq first, two at one seq included', async () => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 4; i++) await log.append(auditRecord(i));
      const hashes = (await log.query({})).map((r) => r.hash);
      expect(await log.newestCheckpoint()).toBeUndefined();
      const saved = [
        checkpointAt(2, hashes[1] ?? ''),
        checkpointAt(4, hashes[3] ?? '', 'Zmlyc3Q'),
        // Another instance signed the same head.
        checkpointAt(4, hashes[3] ?? '', 'c2Vjb25k'),
      ];
      for (const c of saved) await log.saveCheckpoint(c);
      // The same checkpoint again (a retry) is kept once.
      await log.saveCheckpoint(saved[0] as AuditCheckpoint);
      const read: unknown[] = [];
      for await (const c of log.checkpoints()) read.push(c);
      expect(read).toHaveLength(3);
      expect(read).toEqual(expect.arrayContaining(saved));
      expect(read.map((c) => (c as AuditCheckpoint).seq)).toEqual([2, 4, 4]);
      expect((await log.newestCheckpoint())?.seq).toBe(4);
    });

    it("keeps a checkpoint's signed note with it", async () => {
      await fresh();
      const log = await open();
      await log.append(auditRecord(1));
      const note =
        'case-read.invalid/audit\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— case-read.invalid/audit AAAAAQ==\n';
      const withNote = { ...checkpointAt(1, (await log.head()).hash), note };
      await log.saveCheckpoint(withNote);
      expect(await log.newestCheckpoint()).toEqual(withNote);
    });

    it('grows the tree over the records: the RFC 9162 root of their entries, proofs from its stored hashes', async () => {
      await fresh();
      const log = await open();
      expect(await log.growTree()).toEqual({ size: 0, head: { seq: 0, hash: GENESIS_HASH } });
      const entriesOf = async () =>
        (await log.query({ limit: 100 })).map((r) => new TextEncoder().encode(auditEntryOf(r)));
      for (const [from, to] of [
        [1, 5],
        [6, 6],
        [7, 13],
      ] as const) {
        for (let i = from; i <= to; i++) await log.append(auditRecord(i));
        const grown = await log.growTree();
        const entries = await entriesOf();
        expect(grown.size).toBe(to);
        expect(grown.head).toEqual(await log.head());
        expect(Buffer.from(grown.root ?? []).toString('hex')).toBe(
          Buffer.from(referenceRoot(entries)).toString('hex'),
        );
        expect(await log.treeSize()).toBe(to);
        // Every record's inclusion proof, made of the stored hashes, verifies.
        for (let index = 0; index < to; index++) {
          const ranges = inclusionRanges(index, to);
          const stored = await log.treeHashes(storedIndexesFor(ranges));
          const proof = rangeHashes(sha256Bytes, ranges, stored);
          const leaf = sha256Bytes(Uint8Array.of(0), entries[index] as Uint8Array);
          expect(verifyInclusion(sha256Bytes, index, to, leaf, proof, grown.root as Uint8Array)).toBe(true);
        }
      }
      // Grown again with nothing new: the same head, nothing added.
      const again = await log.growTree();
      expect(again.size).toBe(13);
      await expect(log.treeHashes([2 * 13])).rejects.toThrow(/lacks hash 26/);
      const from = [];
      for await (const batch of log.recordsFrom(11)) from.push(...batch.map((r) => r.seq));
      expect(from).toEqual([11, 12, 13]);
      const two = [];
      for await (const batch of log.recordsFrom(11, 2)) two.push(...batch.map((r) => r.seq));
      expect(two).toEqual([11, 12]);
    });

    it('verify checks the chain against checkpoints: through each head, and not ending before one', async () => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 5; i++) await log.append(auditRecord(i));
      const hashes = (await log.query({})).map((r) => r.hash);
      const through = new CheckpointSet();
      through.add(checkpointAt(3, hashes[2] ?? ''));
      through.add(checkpointAt(5, hashes[4] ?? ''));
      expect(await log.verify(through)).toEqual({ ok: true, records: 5, checkpoints: 2 });
      const differs = new CheckpointSet();
      differs.add(checkpointAt(3, 'f'.repeat(64)));
      expect(await log.verify(differs)).toMatchObject({
        ok: false,
        brokenAt: 3,
        reason: expect.stringMatching(/^chain differs from checkpoint at seq 3/),
      });
      const beyond = new CheckpointSet();
      beyond.add(checkpointAt(8, 'e'.repeat(64)));
      expect(await log.verify(beyond)).toMatchObject({
        ok: false,
        brokenAt: 6,
        reason: expect.stringMatching(/^records missing after seq 5: the checkpoint at seq 8/),
      });
    });

    it('keeps concurrent appends in the order appended, and the chain holds', async () => {
      await fresh();
      const log = await open();
      await Promise.all(Array.from({ length: 50 }, (_, i) => log.append(auditRecord(i + 1))));
      expect((await log.query({})).map((r) => r.requestId)).toEqual(
        Array.from({ length: 50 }, (_, i) => `req-${i + 1}`),
      );
      expect(await log.verify()).toEqual({ ok: true, records: 50 });
    });

    it('rejects every append that cannot be stored, and the chain stays where it was', async () => {
      await fresh();
      const log = await open();
      await log.append(auditRecord(1));
      await harness.refuseWrites();
      const results = await Promise.allSettled([log.append(auditRecord(2)), log.append(auditRecord(3))]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      await harness.allowWrites();
      await log.append(auditRecord(4));
      expect((await log.query({})).map((r) => [r.seq, r.requestId])).toEqual([
        [1, 'req-1'],
        [2, 'req-4'],
      ]);
      expect(await log.verify()).toEqual({ ok: true, records: 2 });
    });

    it('stores a record with a continuation as version 5, reads it back with it, and lists it by continuations, oldest first', async () => {
      await fresh();
      const first = await harness.open();
      // None on a fresh store, nor on one of ordinary records only.
      expect(await first.log.continuations()).toEqual([]);
      await first.log.append(auditRecord(1));
      await first.log.append(auditRecord(2));
      expect(await first.log.continuations()).toEqual([]);
      const continued = continuationRecord(3);
      await first.log.append(continued);
      for (let i = 4; i <= 6; i++) await first.log.append(auditRecord(i));
      const again = continuationRecord(7);
      await first.log.append(again);
      await first.log.append(auditRecord(8));
      const all = await first.log.query({});
      expect(all.map((r) => r.version)).toEqual([4, 4, 5, 4, 4, 4, 5, 4]);
      expect(all[2]).toStrictEqual({
        ...continued,
        version: 5,
        seq: 3,
        previousHash: all[1]?.hash,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      // An ordinary record carries no continuation at all (not even null), as it is linked.
      expect(all[3]).toStrictEqual({
        ...auditRecord(4),
        version: 4,
        seq: 4,
        previousHash: all[2]?.hash,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      // Its entry is the version-5 text, the statement last; its hash the leaf hash of that text.
      const entry = auditEntryOf(all[2] as StoredAuditRecord) as string;
      expect(JSON.parse(entry)).toEqual([
        5,
        3,
        all[1]?.hash,
        continued.at.toISOString(),
        continued.requestId,
        continued.clientId,
        continued.certificateSerial,
        null,
        'continueTrail',
        null,
        200,
        null,
        null,
        null,
        continuationStatement(3),
      ]);
      expect(all[2]?.hash).toBe(
        Buffer.from(sha256Bytes(Uint8Array.of(0), new TextEncoder().encode(entry))).toString('hex'),
      );
      const from = [];
      for await (const batch of first.log.recordsFrom(3, 5)) from.push(...batch);
      expect(from).toEqual(all.slice(2, 7));
      expect(await first.log.continuations()).toEqual([all[2], all[6]]);
      expect(await first.log.verify()).toEqual({ ok: true, records: 8 });
      // The tree grows over it like any other record: RFC 9162's root of the entries.
      const grown = await first.log.growTree();
      expect(Buffer.from(grown.root ?? []).toString('hex')).toBe(
        Buffer.from(referenceRoot(all.map((r) => new TextEncoder().encode(auditEntryOf(r))))).toString('hex'),
      );
      // Through the index by crn: a continuation names none.
      expect(await seqsNaming(first.log, 'X123456')).toEqual([1, 2, 4, 5, 8]);
      await first.close();
      // A store opened again lists them still, and the chain goes on from them.
      const reopened = await open();
      expect(await reopened.continuations()).toEqual([all[2], all[6]]);
      await reopened.append(auditRecord(9));
      expect(await reopened.continuations()).toEqual([all[2], all[6]]);
      expect(await reopened.verify()).toEqual({ ok: true, records: 9 });
    });

    it.each<[string, AuditTamper, RegExp]>([
      ['its statement changed', { seq: 3, set: { continuation: continuationStatement(4) } }, /changed/],
      ['its statement removed', { seq: 3, set: { continuation: null } }, /changed/],
      ['its version made 4', { seq: 3, set: { version: 4 } }, /changed/],
    ])('verify names a damaged continuation record: %s', async (_label, change, reason) => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 5; i++) await log.append(i === 3 ? continuationRecord(3) : auditRecord(i));
      expect(await log.verify()).toEqual({ ok: true, records: 5 });
      await harness.tamper(change);
      expect(await log.verify()).toMatchObject({
        ok: false,
        brokenAt: 3,
        reason: expect.stringMatching(reason),
      });
    });

    it.each<[string, AuditTamper]>([
      ['a statement given to it', { seq: 2, set: { continuation: continuationStatement(2) } }],
      ['its version made 5', { seq: 2, set: { version: 5 } }],
    ])('verify names an ordinary record made to look like a continuation: %s', async (_label, change) => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 3; i++) await log.append(auditRecord(i));
      await harness.tamper(change);
      expect(await log.verify()).toMatchObject({
        ok: false,
        brokenAt: 2,
        reason: expect.stringMatching(/changed/),
      });
    });

    it.skipIf(!archives)(
      'keeps continuation records when it lets go of archived records: still listed, verify walks from the boundary',
      async () => {
        await fresh();
        const log = await open();
        for (let i = 1; i <= 12; i++) {
          await log.append(i === 3 || i === 5 ? continuationRecord(i) : auditRecord(i));
        }
        const before = await log.query({});
        const kept = [before[2], before[4]];
        expect(await log.continuations()).toEqual(kept);
        const grown = await log.growTree();
        // Up to a continuation record itself: the boundary is its head, and it stays.
        expect(await log.forget(5)).toMatchObject({ upTo: 5, records: 3 });
        expect(await log.archivedHead()).toEqual({ seq: 5, hash: before[4]?.hash });
        expect(await log.continuations()).toEqual(kept);
        // Past them: the ordinary records go, the continuation records stay, nothing else.
        expect(await log.forget(8)).toMatchObject({ upTo: 8, records: 3 });
        expect(await log.continuations()).toEqual(kept);
        expect((await log.query({})).map((r) => r.seq)).toEqual([3, 5, 9, 10, 11, 12]);
        // The walk from the boundary checks the held trail after it, signed roots too.
        const roots = new CheckpointSet();
        roots.addRoot(12, grown.root as Uint8Array);
        roots.add(checkpointAt(12, before[11]?.hash ?? ''));
        expect(await log.verify(roots)).toEqual({ ok: true, records: 4, checkpoints: 1 });
        const from = [];
        for await (const batch of log.recordsFrom(9)) from.push(...batch.map((r) => r.seq));
        expect(from).toEqual([9, 10, 11, 12]);
        expect(await seqsNaming(log, 'X123456')).toEqual([10, 11]);
        // Asked again: the next run starts after the boundary, not at a kept record.
        expect(await log.forget(8)).toMatchObject({ upTo: 8, records: 0 });
        expect(await log.forget(10)).toMatchObject({ upTo: 10, records: 2 });
        // The chain goes on; a store opened again lists them still.
        await log.append(auditRecord(13));
        for (const o of opened.splice(0)) await o.close();
        const again = await open();
        expect(await again.continuations()).toEqual(kept);
        expect(await again.verify()).toEqual({ ok: true, records: 3 });
      },
    );

    it.skipIf(!archives)(
      'lets go of archived records: verify walks from the boundary, the chain, the tree and proofs go on',
      async () => {
        await fresh();
        const log = await open();
        for (let i = 1; i <= 10; i++) await log.append(auditRecord(i));
        const before = await log.query({ limit: 100 });
        const entries = before.map((r) => new TextEncoder().encode(auditEntryOf(r)));
        const grown = await log.growTree();
        // Not past the tree: those records' hashes would be lost with them.
        await log.append(auditRecord(11));
        await expect(log.forget(11)).rejects.toThrow(/not all in the stored tree/);
        const forgotten = await log.forget(6);
        expect(forgotten).toMatchObject({ upTo: 6, records: 6 });
        // Through the index by crn too: none of those let go of, every one held (11 among them).
        expect(await seqsNaming(log, 'X123456')).toEqual([7, 8, 10, 11]);
        expect(await seqsNaming(log, 'A000001')).toEqual([9]);
        expect(await log.archivedHead()).toEqual({ seq: 6, hash: before[5]?.hash });
        expect((await log.query({})).map((r) => r.seq)).toEqual([7, 8, 9, 10, 11]);
        const from = [];
        for await (const batch of log.recordsFrom(1)) from.push(...batch.map((r) => r.seq));
        expect(from).toEqual([7, 8, 9, 10, 11]);
        // Signed roots after the boundary are checked from the tree's frontier there.
        const roots = new CheckpointSet();
        roots.addRoot(8, referenceRoot(entries.slice(0, 8)));
        roots.addRoot(10, grown.root as Uint8Array);
        roots.add(checkpointAt(10, before[9]?.hash ?? ''));
        expect(await log.verify(roots)).toEqual({ ok: true, records: 5, checkpoints: 1 });
        const wrongRoot = new CheckpointSet();
        wrongRoot.addRoot(9, referenceRoot(entries.slice(1, 10)));
        expect(await log.verify(wrongRoot)).toMatchObject({ ok: false, brokenAt: 9 });
        // Appends continue the chain; the tree grows on; a proof for a newer record verifies.
        await log.append(auditRecord(12));
        const all = await log.query({});
        expect(all.map((r) => r.seq)).toEqual([7, 8, 9, 10, 11, 12]);
        expect(all[5]?.previousHash).toBe(all[4]?.hash);
        const later = [...entries, ...all.slice(4).map((r) => new TextEncoder().encode(auditEntryOf(r)))];
        const next = await log.growTree();
        expect(next.size).toBe(12);
        expect(Buffer.from(next.root ?? []).toString('hex')).toBe(
          Buffer.from(referenceRoot(later)).toString('hex'),
        );
        const ranges = inclusionRanges(8, 12);
        const proof = rangeHashes(sha256Bytes, ranges, await log.treeHashes(storedIndexesFor(ranges)));
        const leaf = sha256Bytes(Uint8Array.of(0), later[8] as Uint8Array);
        expect(verifyInclusion(sha256Bytes, 8, 12, leaf, proof, next.root as Uint8Array)).toBe(true);
        // Never the newest record: the head stays a held one. Asked again: nothing more to do.
        expect(await log.forget(12)).toMatchObject({ upTo: 11, records: 5 });
        expect(await log.head()).toEqual({ seq: 12, hash: all[5]?.hash });
        expect(await log.forget(11)).toMatchObject({ upTo: 11, records: 0 });
        expect(await log.verify()).toEqual({ ok: true, records: 1 });
        // A record after the boundary changed is still found.
        await harness.tamper({ seq: 12, set: { status: 500 } });
        expect(await log.verify()).toMatchObject({ ok: false, brokenAt: 12 });
      },
    );

    it.skipIf(!archives)(
      'keeps of the archived range only the hashes proofs after it are made of (subtrees of 256 leaves and more)',
      async () => {
        await fresh();
        const log = await open();
        await Promise.all(Array.from({ length: 1300 }, (_, i) => log.append(auditRecord(i + 1))));
        const all = await log.query({ limit: 2000 });
        const entries = all.map((r) => new TextEncoder().encode(auditEntryOf(r)));
        expect((await log.growTree()).size).toBe(1300);
        expect(await log.forget(1100)).toMatchObject({ upTo: 1100, records: 1100 });
        const root = referenceRoot(entries);
        // Every held record's inclusion proof, and every consistency proof from a tree at or
        // after the boundary, is made of what is kept, and verifies.
        for (const index of [1100, 1101, 1200, 1299]) {
          const ranges = inclusionRanges(index, 1300);
          const proof = rangeHashes(sha256Bytes, ranges, await log.treeHashes(storedIndexesFor(ranges)));
          const leaf = sha256Bytes(Uint8Array.of(0), entries[index] as Uint8Array);
          expect(verifyInclusion(sha256Bytes, index, 1300, leaf, proof, root), `leaf ${index}`).toBe(true);
        }
        for (const old of [1024, 1100, 1101, 1200, 1299]) {
          const ranges = consistencyRanges(old, 1300);
          const proof = rangeHashes(sha256Bytes, ranges, await log.treeHashes(storedIndexesFor(ranges)));
          const oldRoot = referenceRoot(entries.slice(0, old));
          expect(verifyConsistency(sha256Bytes, old, 1300, oldRoot, root, proof), `from ${old}`).toBe(true);
        }
        // The small subtrees inside the archived tiles are gone; those of 256 leaves stay.
        await expect(log.treeHashes([storedIndexOf({ level: 0, index: 500 })])).rejects.toThrow(/lacks hash/);
        await expect(log.treeHashes([storedIndexOf({ level: 7, index: 3 })])).rejects.toThrow(/lacks hash/);
        expect((await log.treeHashes([storedIndexOf({ level: 8, index: 3 })])).size).toBe(1);
        // The walk from the boundary checks a signed root after it; the tree grows on.
        const roots = new CheckpointSet();
        roots.addRoot(1300, root);
        expect(await log.verify(roots)).toEqual({ ok: true, records: 200, checkpoints: 0 });
        for (let i = 1301; i <= 1310; i++) await log.append(auditRecord(i));
        const more = [
          ...entries,
          ...(await log.query({ limit: 2000 }))
            .slice(200)
            .map((r) => new TextEncoder().encode(auditEntryOf(r))),
        ];
        const grown = await log.growTree();
        expect(grown.size).toBe(1310);
        expect(Buffer.from(grown.root ?? []).toString('hex')).toBe(
          Buffer.from(referenceRoot(more)).toString('hex'),
        );
      },
    );

    it.skipIf(!archives)(
      'lets go of a tree grown in many small rows a step at a time, its root and proofs intact',
      async () => {
        await fresh();
        const log = await open();
        // A row every 3 records, as checkpoints a moment apart grow it: 200 rows, 170 below the tiles let go of.
        for (let i = 1; i <= 600; i++) {
          await log.append(auditRecord(i));
          if (i % 3 === 0) await log.growTree();
        }
        const entries = (await log.query({ limit: 1000 })).map((r) =>
          new TextEncoder().encode(auditEntryOf(r)),
        );
        expect(await log.forget(550)).toMatchObject({ upTo: 550, records: 550 });
        const root = referenceRoot(entries);
        for (const index of [550, 599]) {
          const ranges = inclusionRanges(index, 600);
          const proof = rangeHashes(sha256Bytes, ranges, await log.treeHashes(storedIndexesFor(ranges)));
          const leaf = sha256Bytes(Uint8Array.of(0), entries[index] as Uint8Array);
          expect(verifyInclusion(sha256Bytes, index, 600, leaf, proof, root), `leaf ${index}`).toBe(true);
        }
        // Leaf 500 was in the third step's rows (64 rows a step, 3 leaves a row).
        for (const index of [100, 300, 500]) {
          await expect(log.treeHashes([storedIndexOf({ level: 0, index })])).rejects.toThrow(/lacks hash/);
        }
        const roots = new CheckpointSet();
        roots.addRoot(600, root);
        expect(await log.verify(roots)).toEqual({ ok: true, records: 50, checkpoints: 0 });
      },
    );

    it.skipIf(!archives)(
      'lets one archive run at a time: a second is told who holds it and since when; released, the next takes it',
      async () => {
        await fresh();
        const one = await open();
        const two = await open();
        const before = Date.now();
        const first = await one.lockArchive('host-a pid 1');
        if (!('held' in first)) throw new Error(`the first run was refused: ${JSON.stringify(first)}`);
        const second = await two.lockArchive('host-b pid 2');
        if (!('busy' in second)) throw new Error('a second run took the lock the first holds');
        expect(second.busy.who).toContain('host-a pid 1');
        expect(second.busy.since.getTime()).toBeGreaterThanOrEqual(before - 1000);
        expect(second.busy.since.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
        // The holder asks again (as it does while it writes): still its own, and still refused to others.
        expect(await first.held.stillHeld()).toBe(true);
        expect(await one.lockArchive('host-a pid 1 again')).toMatchObject({ busy: expect.anything() });
        await first.held.release();
        await first.held.release();
        expect(await first.held.stillHeld()).toBe(false);
        const third = await two.lockArchive('host-b pid 2');
        if (!('held' in third)) throw new Error('the lock was not free after its release');
        expect(await third.held.stillHeld()).toBe(true);
        await third.held.release();
      },
    );

    it.skipIf(archives)('refuses the archive lock, as it refuses to let go of records', async () => {
      await fresh();
      const log = await open();
      await expect(log.lockArchive('host-a pid 1')).rejects.toThrow(/does not archive/);
    });

    it.skipIf(archives)('refuses to let go of records, naming why', async () => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 3; i++) await log.append(auditRecord(i));
      await log.growTree();
      await expect(log.forget(2)).rejects.toThrow(/does not archive/);
      expect(await log.archivedHead()).toEqual({ seq: 0, hash: GENESIS_HASH });
      expect(await log.verify()).toEqual({ ok: true, records: 3 });
    });

    it("keeps witnesses' cosignatures with their checkpoint: added in two calls, read back merged, each once, after reopening too", async () => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 2; i++) await log.append(auditRecord(i));
      const hashes = (await log.query({})).map((r) => r.hash);
      const note =
        'case-read.invalid/audit\n2\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— case-read.invalid/audit AAAAAQ==\n';
      const one = checkpointAt(1, hashes[0] ?? '');
      const two = { ...checkpointAt(2, hashes[1] ?? '', 'dHdv'), note };
      // Another instance signed the same head: it is cosigned by nobody.
      const other = checkpointAt(2, hashes[1] ?? '', 'b3RoZXI');
      for (const c of [one, two, other]) await log.saveCheckpoint(c);
      const [a, b, c] = [
        cosignatureLine('w1.example', 1),
        cosignatureLine('w2.example', 2),
        cosignatureLine('w3.example', 3),
      ];
      await log.addCosignatures(two, [a, b]);
      await log.addCosignatures(two, [b, c, c]);
      await log.addCosignatures(one, [a]);
      // Lines it holds already: nothing changes.
      await log.addCosignatures(two, [c, a]);
      const expected = [{ ...one, cosignatures: [a] }, { ...two, cosignatures: [a, b, c] }, other];
      const check = async (store: AuditLog) => {
        expect(await store.newestCheckpoint({ withNote: true })).toEqual(expected[1]);
        const newest = await store.newestCheckpoint();
        expect(newest?.seq).toBe(2);
        const read = await allCheckpoints(store);
        expect(read).toHaveLength(3);
        expect(read).toEqual(expect.arrayContaining(expected));
        // A checkpoint no witness cosigned carries none.
        const bare = read.find(
          (r) => (r as AuditCheckpoint).signature === other.signature,
        ) as AuditCheckpoint;
        expect(bare.cosignatures ?? []).toEqual([]);
      };
      await check(log);
      for (const o of opened.splice(0)) await o.close();
      await check(await open());
    });

    it('stores the cosignatures a checkpoint carries when it is saved, and merges those of a checkpoint saved again', async () => {
      await fresh();
      const log = await open();
      await log.append(auditRecord(1));
      const [a, b] = [cosignatureLine('w1.example', 1), cosignatureLine('w2.example', 2)];
      const bare = checkpointAt(1, (await log.head()).hash);
      await log.saveCheckpoint({ ...bare, cosignatures: [a] });
      expect(await log.newestCheckpoint()).toEqual({ ...bare, cosignatures: [a] });
      await log.saveCheckpoint({ ...bare, cosignatures: [b, a] });
      expect(await allCheckpoints(log)).toEqual([{ ...bare, cosignatures: [a, b] }]);
    });

    it('refuses cosignatures for a checkpoint not stored, and lines that are not signature lines, keeping nothing of them', async () => {
      await fresh();
      const log = await open();
      for (let i = 1; i <= 2; i++) await log.append(auditRecord(i));
      const hashes = (await log.query({})).map((r) => r.hash);
      const stored = checkpointAt(1, hashes[0] ?? '');
      await log.saveCheckpoint(stored);
      const line = cosignatureLine('w1.example', 1);
      await expect(log.addCosignatures(checkpointAt(2, hashes[1] ?? '', 'dHdv'), [line])).rejects.toThrow(
        /cannot add cosignatures to the checkpoint at seq 2 .*not stored/,
      );
      // Matched by its signature too: the same seq signed otherwise is another checkpoint.
      await expect(log.addCosignatures(checkpointAt(1, hashes[0] ?? '', 'Zm9yZ2Vk'), [line])).rejects.toThrow(
        /not stored/,
      );
      for (const bad of [
        '— w1.example',
        `${line}\n`,
        'w1.example AAAAAAAAAAA=',
        `— w1+x ${line.slice(13)}`,
      ]) {
        await expect(log.addCosignatures(stored, [line, bad])).rejects.toThrow(/is not a signature line/);
      }
      await expect(
        log.addCosignatures(
          stored,
          Array.from({ length: 100 }, (_, i) => cosignatureLine(`w${i}.example`, i)),
        ),
      ).rejects.toThrow(/more than 99/);
      expect(await allCheckpoints(log)).toEqual([stored]);
      expect(await log.newestCheckpoint()).toEqual(stored);
    });

    it("saves each witness's size, the last one saved, and keeps them when reopened", async () => {
      await fresh();
      const log = await open();
      expect(await log.witnessSizes()).toEqual(new Map());
      const [w1, w2] = ['w1.example+1a2b3c4d+BHCKmT', 'w2.example+5e6f7a8b+BEZVk0'];
      await log.saveWitnessSize(w1, 5);
      await log.saveWitnessSize(w2, 0);
      await log.saveWitnessSize(w1, 9);
      expect(await log.witnessSizes()).toEqual(
        new Map([
          [w1, 9],
          [w2, 0],
        ]),
      );
      // Back to a smaller size: as the witness said, recorded.
      await log.saveWitnessSize(w2, 12);
      await log.saveWitnessSize(w2, 7);
      for (const [vkey, size] of [
        [w1, -1],
        [w1, 1.5],
        [w1, Number.NaN],
        ['', 3],
        ['w\n1', 3],
        ['w'.repeat(1025), 3],
      ] as const) {
        await expect(log.saveWitnessSize(vkey, size)).rejects.toThrow(/witness's (vkey|size)/);
      }
      for (const o of opened.splice(0)) await o.close();
      expect(await (await open()).witnessSizes()).toEqual(
        new Map([
          [w1, 9],
          [w2, 7],
        ]),
      );
    });

    it.skipIf(writers !== 'many')(
      'keeps every cosignature several writers add to one checkpoint at once',
      async () => {
        await fresh();
        const writers = [await open(), await open(), await open()];
        await writers[0]?.append(auditRecord(1));
        const checkpoint = checkpointAt(1, (await writers[0]?.head())?.hash ?? '');
        await writers[0]?.saveCheckpoint(checkpoint);
        const lines = Array.from({ length: 30 }, (_, i) => cosignatureLine(`w${i}.example`, i));
        await Promise.all(
          lines.map((line, i) => (writers[i % 3] as AuditLog).addCosignatures(checkpoint, [line])),
        );
        const cosigned = (await writers[1]?.newestCheckpoint())?.cosignatures ?? [];
        expect([...cosigned].sort()).toEqual([...lines].sort());
      },
    );

    it('a store the release before made is migrated by stores migrate: its checkpoints are kept and gain cosignatures, and it takes continuation records', async (context) => {
      if (harness.previous === undefined) return context.skip();
      await fresh();
      const head = { seq: 1, hash: 'a'.repeat(64) };
      const older = checkpointAt(head.seq, head.hash);
      await harness.previous.build(older);
      const migrated = await harness.previous.migrate();
      expect(migrated).toEqual({
        before: migrated.current - 1,
        after: migrated.current,
        current: migrated.current,
      });
      // Migrated already: nothing more to do.
      expect(await harness.previous.migrate()).toMatchObject({
        before: migrated.current,
        after: migrated.current,
      });
      const log = await open();
      expect(await log.newestCheckpoint()).toEqual(older);
      const line = cosignatureLine('w1.example', 1);
      await log.addCosignatures(older, [line]);
      await log.saveWitnessSize('w1.example+1a2b3c4d+BHCKmT', 1);
      expect(await allCheckpoints(log)).toEqual([{ ...older, cosignatures: [line] }]);
      expect(await log.witnessSizes()).toEqual(new Map([['w1.example+1a2b3c4d+BHCKmT', 1]]));
      // It takes a continuation record (format 5) and finds it again.
      expect(await log.continuations()).toEqual([]);
      await log.append(continuationRecord(1));
      expect((await log.continuations()).map((r) => [r.seq, r.version, r.continuation])).toEqual([
        [1, 5, continuationStatement(1)],
      ]);
      expect(await log.verify()).toEqual({ ok: true, records: 1 });
      // Opened as serve opens its audit store, without stores migrate first: migrated as it opens.
      await fresh();
      await harness.previous.build(older);
      const served = await open();
      await served.addCosignatures(older, [line]);
      expect(await served.newestCheckpoint()).toEqual({ ...older, cosignatures: [line] });
    });

    // Each store runs the writers cases that fit it; the others are reported skipped.
    it.skipIf(writers !== 'many')(
      'takes appends from several writers into one unbroken chain, refusing none',
      async () => {
        await fresh();
        const writers = [await open(), await open(), await open()];
        const appends: Promise<void>[] = [];
        for (let round = 0; round < 20; round++) {
          writers.forEach((w, i) => {
            appends.push(w.append(auditRecord(round * 3 + i + 1)));
          });
          if (round % 5 === 4) await Promise.all(appends);
        }
        await Promise.all(appends);
        const all = await writers[0]?.query({ limit: 1000 });
        expect(all?.map((r) => r.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
        expect(new Set(all?.map((r) => r.requestId)).size).toBe(60);
        expect(await writers[2]?.verify()).toEqual({ ok: true, records: 60 });
      },
    );

    it.skipIf(writers !== 'many')(
      'grows one tree from several writers, growing it at once while they append',
      async () => {
        await fresh();
        const writers = [await open(), await open(), await open()];
        const appends: Promise<void>[] = [];
        const grows: Promise<unknown>[] = [];
        for (let round = 0; round < 20; round++) {
          writers.forEach((w, i) => {
            appends.push(w.append(auditRecord(round * 3 + i + 1)));
          });
          // Every writer grows the tree while appends are in flight: none waits wrongly, none doubles a row.
          if (round % 4 === 3) for (const w of writers) grows.push(w.growTree());
        }
        await Promise.all(appends);
        await Promise.all(grows);
        const heads = await Promise.all(writers.map((w) => w.growTree()));
        for (const head of heads) expect(head.size).toBe(60);
        const roots = await grownAndReferenceRoots(writers[1] as AuditLog);
        expect(roots.grown).toBe(roots.reference);
        expect(new Set(heads.map((h) => Buffer.from(h.root ?? []).toString('hex')))).toEqual(
          new Set([roots.reference]),
        );
      },
    );

    it.skipIf(writers !== 'one')(
      'refuses a second writer while one holds the store; the next writer continues the chain',
      async () => {
        await fresh();
        const first = await harness.open();
        await first.log.append(auditRecord(1));
        await expect(harness.open()).rejects.toThrow(/one writer/);
        await first.log.append(auditRecord(2));
        await first.close();
        const next = await open();
        await next.append(auditRecord(3));
        expect((await next.query({})).map((r) => [r.seq, r.requestId])).toEqual([
          [1, 'req-1'],
          [2, 'req-2'],
          [3, 'req-3'],
        ]);
        expect(await next.verify()).toEqual({ ok: true, records: 3 });
      },
    );
  });
}
