import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { spillFiles } from '../../../src/adapters/spill-file/spill-file.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { signContinuation } from '../../../src/app/audit/continuation.js';
import { type DisclosureSources, disclosuresOf } from '../../../src/app/audit/disclosures.js';
import { auditHashes, noteSigner } from '../../../src/app/composition/audit-keys.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { continuationRecord, type TrailContinuation } from '../../../src/domain/audit/continuation.js';
import { Crn } from '../../../src/domain/crn.js';
import { StoreUnavailableError, TrailIncompleteError } from '../../../src/domain/errors.js';
import { getSubjectAccessRequest } from '../../../src/domain/use-cases/subject-access.js';
import type { AuditLog, TimeWindow } from '../../../src/ports/audit-log.js';
import type { CheckpointSigner } from '../../../src/ports/checkpoint-keys.js';
import type { TrailGap } from '../../../src/ports/disclosures.js';
import { verifierKeyLine } from '../../../src/tlog/note.js';
import { auditRecord } from '../../contract/audit-log.contract.js';

/**
 * The trail's losses in a subject access answer (ADR 30; issue 67): a SQLite trail continued
 * after a loss (a continuation record, its statement signed, appended as the store appends
 * one) gives every answer whose window the lost stretch meets a gap, with or without
 * disclosures; a statement that cannot be read or does not verify refuses the answer, never
 * hides the loss; a trail never continued gives none.
 */

const A = 'case-read.test.example/audit';
const B = 'case-read.test.example/audit-2';
const C = 'case-read.test.example/audit-3';
const CRN = 'X123456';
const RECORDS = 40;
/** Records naming the crn: every seventh, the rest another's. */
const names = (i: number) => (i % 7 === 0 ? CRN : 'A000001');
const at = (i: number) => new Date(Date.UTC(2026, 0, 1 + i, 12));
const ms = (date: Date, plus: number) => new Date(date.getTime() + plus);

let dir: string;
let log: SqliteAuditLog;
let privatePem: string;
/** Each log's private key (a new log has a key of its own): A's is `privatePem`. */
let pemOf: Map<string, string>;
let signer: CheckpointSigner;
let note: ReturnType<typeof noteSigner>;

async function checkpointNow(by = signer): Promise<void> {
  const grown = await log.growTree();
  if (grown.root) await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), by, grown.root));
}

async function append(from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++)
    await log.append(auditRecord(i, { crn: names(i), at: at(i), requestId: `req-${i}` }));
}

/** The statement of a loss after record `kept` (held `lost` more), broken an hour after the last kept record. */
function lossAfter(kept: number, lost: number, over: Partial<TrailContinuation> = {}): TrailContinuation {
  const lastKept = kept === 0 ? null : at(kept);
  const origin = over.origin ?? B;
  const previous = over.previous ?? A;
  return {
    origin,
    vkey: vkeyOf(origin),
    previous,
    previousVkey: vkeyOf(previous),
    kept,
    held: kept + lost,
    lastKept,
    broke: ms(lastKept ?? at(0), 3_600_000),
    reason: `restored from the backup of record ${kept} (INC-${kept})`,
    ...over,
  };
}

/** The verifier key of the log `origin`. */
function vkeyOf(origin: string): string {
  const key = noteSigner(pemOf.get(origin) ?? '', origin);
  return verifierKeyLine(auditHashes.sha256, key.name, key.publicKey);
}

/**
 * `c`'s statement signed by the keys of the logs either side of its break, as `audit continue`
 * signs it; given `pem`, by that one key under both names instead.
 */
const signed = async (c: TrailContinuation, pem?: string): Promise<string> =>
  signContinuation(
    c,
    (await checkpointSigner(pem ?? pemOf.get(c.origin) ?? '', c.origin)).note,
    (await checkpointSigner(pem ?? pemOf.get(c.previous) ?? '', c.previous)).note,
  );

/** The continuation record of `c` appended as the store appends one, its statement signed as {@link signed} signs it. */
async function continueTrail(c: TrailContinuation, pem?: string): Promise<void> {
  await log.append(continuationRecord(c, await signed(c, pem), `continue-${c.kept + 1}`));
}

/** What a gap of `c` is, as the answer states it. */
const gapOf = (c: TrailContinuation): TrailGap => ({
  from: c.lastKept?.toISOString() ?? null,
  to: c.broke.toISOString(),
  recordsLost: c.held - c.kept,
  reason: c.reason,
});

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-disclosure-gaps-'));
  log = SqliteAuditLog.open(join(dir, 'audit.db'));
  privatePem = (await generateCheckpointKeys()).privatePem;
  pemOf = new Map([
    [A, privatePem],
    [B, (await generateCheckpointKeys()).privatePem],
    [C, (await generateCheckpointKeys()).privatePem],
  ]);
  signer = await checkpointSigner(privatePem, A);
  note = noteSigner(privatePem, A);
});

afterEach(() => {
  log.close();
  rmSync(dir, { recursive: true, force: true });
});

const sources = (overrides: Partial<DisclosureSources> = {}): DisclosureSources => ({
  hashes: auditHashes,
  log,
  // The log's key, and those its continuations name (serve learns them: keysOfTrail).
  keys: [note, noteSigner(pemOf.get(B) ?? '', B), noteSigner(pemOf.get(C) ?? '', C)],
  spill: spillFiles(),
  ...overrides,
});

const listed = (window: TimeWindow = {}, crn = CRN, given = sources()) =>
  disclosuresOf(given).of(crn, window);

/** Why the disclosures were refused: a TrailIncompleteError's reason. */
async function refusal(listing: Promise<unknown>): Promise<string> {
  const error = await listing.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TrailIncompleteError);
  return (error as TrailIncompleteError).reason;
}

describe('the gaps of a subject access answer', () => {
  it('are none on a trail never continued', async () => {
    await append(1, RECORDS);
    await checkpointNow();
    const list = await listed();
    expect(list.count).toBe(5);
    expect(list.gaps).toEqual([]);
    expect((await listed({}, 'Z999999')).gaps).toEqual([]);
  });

  it('state a loss the window meets, from the continuation record, beside the same disclosures', async () => {
    await append(1, RECORDS);
    await checkpointNow();
    const before = await listed();
    const loss = lossAfter(RECORDS, 12);
    await continueTrail(loss);
    const list = await listed();
    expect(list.gaps).toEqual([gapOf(loss)]);
    expect(list.gaps[0]).toEqual({
      from: '2026-02-10T12:00:00.000Z',
      to: '2026-02-10T13:00:00.000Z',
      recordsLost: 12,
      reason: 'restored from the backup of record 40 (INC-40)',
    });
    expect(list.count).toBe(before.count);
    expect(list.checkpoint).toBe(before.checkpoint);
    // With no disclosure (a crn never named): still told; the use case answers content, not 204.
    const none = await listed({}, 'Z999999');
    expect(none.count).toBe(0);
    expect(none.gaps).toEqual([gapOf(loss)]);
    const answer = await getSubjectAccessRequest(
      { disclosures: disclosuresOf(sources()), now: () => new Date('2026-11-28T12:00:00Z') },
      { crn: Crn.parse('Z999999') },
    );
    expect(answer).toMatchObject({ kind: 'content', crn: 'Z999999' });
  });

  it('keep to the window: a loss meets it unless it ended before the window began or began at or after its end', async () => {
    await append(1, RECORDS);
    await checkpointNow();
    const first = lossAfter(RECORDS, 12);
    await continueTrail(first);
    await append(RECORDS + 2, RECORDS + 20);
    await checkpointNow();
    const second = lossAfter(RECORDS + 20, 3, { origin: C, previous: B });
    await continueTrail(second);
    const gaps = async (window: TimeWindow) => (await listed(window)).gaps;
    const lastKept = first.lastKept as Date;
    expect(await gaps({})).toEqual([gapOf(first), gapOf(second)]);
    // Before the loss: the window's end at the last kept record (exclusive) is not met.
    expect(await gaps({ from: at(1), to: at(20) })).toEqual([]);
    expect(await gaps({ to: lastKept })).toEqual([]);
    expect(await gaps({ to: ms(lastKept, 1) })).toEqual([gapOf(first)]);
    // After it: a window beginning at the break still meets it, a millisecond later not.
    expect(await gaps({ from: first.broke, to: at(RECORDS + 10) })).toEqual([gapOf(first)]);
    expect(await gaps({ from: ms(first.broke, 1), to: at(RECORDS + 10) })).toEqual([]);
    expect(await gaps({ from: ms(first.broke, 1) })).toEqual([gapOf(second)]);
    // Inside the lost stretch, and around it.
    expect(await gaps({ from: ms(lastKept, 60_000), to: ms(lastKept, 120_000) })).toEqual([gapOf(first)]);
    expect(await gaps({ from: at(0), to: at(1000) })).toEqual([gapOf(first), gapOf(second)]);
  });

  it("of a loss from the trail's start (none kept: from null) meet every window that does not begin after the break", async () => {
    const loss = lossAfter(0, 5);
    await continueTrail(loss);
    await append(2, 15);
    await checkpointNow();
    const gap = gapOf(loss);
    expect(gap.from).toBeNull();
    expect((await listed({ to: new Date('2000-01-01T00:00:00Z') })).gaps).toEqual([gap]);
    expect((await listed({})).gaps).toEqual([gap]);
    expect((await listed({ from: ms(loss.broke, 1) })).gaps).toEqual([]);
    expect((await listed({})).count).toBe(2);
  });

  it('refuse the answer, whatever its window, when a statement does not verify or cannot be read', async () => {
    await append(1, RECORDS);
    await checkpointNow();
    // Signed by another key than the log's.
    await continueTrail(lossAfter(RECORDS, 12), (await generateCheckpointKeys()).privatePem);
    expect(await refusal(listed())).toMatch(/does not verify with the log's keys/);
    expect(await refusal(listed({ from: at(1), to: at(2) }))).toMatch(
      /no answer is given that could hide a loss/,
    );
    expect(await refusal(listed({}, 'Z999999'))).toMatch(/case-read audit verify/);
  });

  it('refuse the answer when a continuation record carries no signed note, or one not of its place', async () => {
    await append(1, RECORDS);
    await checkpointNow();
    const loss = lossAfter(RECORDS, 12);
    await log.append(continuationRecord(loss, 'not a signed note', 'continue-41'));
    expect(await refusal(listed())).toMatch(/statement of what it lost cannot be read .*no blank line/);
    log.close();
    rmSync(dir, { recursive: true, force: true });
    dir = mkdtempSync(join(tmpdir(), 'case-read-disclosure-gaps-'));
    log = SqliteAuditLog.open(join(dir, 'audit.db'));
    await append(1, RECORDS);
    await checkpointNow();
    // Signed, but stating 30 records kept where it is record 41.
    const misplaced = lossAfter(30, 22, { broke: ms(at(RECORDS), 3_600_000) });
    await log.append(continuationRecord(misplaced, await signed(misplaced), 'continue-41'));
    expect(await refusal(listed())).toMatch(/it is not record 31/);
  });

  it("open a statement signed before a key rotation with the keys the trail was signed with, not only the answer's", async () => {
    await append(1, RECORDS);
    await checkpointNow();
    const loss = lossAfter(RECORDS, 12);
    await continueTrail(loss);
    // The key rotated: serve's wiring, the new key first, then the public half of the one it replaced.
    const rotated = (await generateCheckpointKeys()).privatePem;
    const rotatedNote = noteSigner(rotated, A);
    await append(RECORDS + 2, RECORDS + 8);
    await checkpointNow(await checkpointSigner(rotated, A));
    const list = await listed({}, CRN, sources({ keys: [rotatedNote, note], signing: rotatedNote }));
    expect(list.gaps).toEqual([gapOf(loss)]);
    expect(list.count).toBe(6);
  });

  it('are refused with the store when its continuations cannot be read', async () => {
    await append(1, RECORDS);
    await checkpointNow();
    const failing = (error: Error): AuditLog =>
      new Proxy(log, {
        get: (target, property, receiver) =>
          property === 'continuations'
            ? () => Promise.reject(error)
            : (Reflect.get(target, property, receiver)?.bind?.(target) ??
              Reflect.get(target, property, receiver)),
      });
    await expect(
      listed({}, CRN, sources({ log: failing(new StoreUnavailableError('audit store', 'down')) })),
    ).rejects.toThrow(StoreUnavailableError);
    expect(await refusal(listed({}, CRN, sources({ log: failing(new Error('disk I/O error')) })))).toBe(
      'disk I/O error',
    );
  });
});
