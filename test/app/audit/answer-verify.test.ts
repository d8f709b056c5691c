import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { spillFiles } from '../../../src/adapters/spill-file/spill-file.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import {
  AnswerNotProvedError,
  NotAnAnswerError,
  readAnswer,
  verifyAnswer,
} from '../../../src/app/audit/answer-verify.js';
import { writeArchive } from '../../../src/app/audit/archive.js';
import { disclosuresOf } from '../../../src/app/audit/disclosures.js';
import { auditHashes, noteSigner } from '../../../src/app/composition/audit-keys.js';
import { auditEntryOf } from '../../../src/domain/audit/canonical-text.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { contentText } from '../../../src/domain/subject-access/content-text.js';
import { batchProofIndexes } from '../../../src/tlog/batch-proof.js';
import {
  appendLeaves,
  inclusionRanges,
  leafHash,
  rootOfFrontier,
  storedIndexOf,
  subtreesOf,
} from '../../../src/tlog/merkle.js';
import { noteTextOf, signNote } from '../../../src/tlog/note.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { MemoryArchiveTiles } from '../../contract/memory-archive-tiles.js';
import { HELD_ARCHIVE_LOCK } from '../../support/audit.js';

/**
 * A saved subject access answer checked offline (decisions §22, §23; ADR 27): a real answer,
 * made by disclosuresOf from a SQLite trail and its archive and written as serve writes it
 * (contentText), is accepted; one hash, one entry, one shown field changed, a checkpoint of
 * another key, a hash too few or too many, disclosures out of order, are each refused, naming
 * the first disclosure that is not proved where the refusal is one disclosure's.
 */

const ORIGIN = 'case-read.test.example/audit';
const CRN = 'X123456';
const RECORDS = 700;
/** Records naming the crn: every seventh, the rest another's or none. */
const names = (i: number) => (i % 7 === 0 ? CRN : i % 5 === 0 ? null : 'A000001');
const at = (i: number) => new Date(Date.UTC(2026, 0, 1 + Math.floor(i / 10), 12));

let dir: string;
let log: SqliteAuditLog;
let note: ReturnType<typeof noteSigner>;
/** The answer's JSON text, as serve answers it. */
let text: string;

type Json = { [key: string]: unknown };
interface Written {
  content: {
    crn: string;
    gaps?: unknown;
    disclosures: Json[];
    proof?: { checkpoint: string; hashes: string };
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-answer-verify-'));
  log = SqliteAuditLog.open(join(dir, 'audit.db'));
  const keys = await generateCheckpointKeys();
  const signer = await checkpointSigner(keys.privatePem, ORIGIN);
  note = noteSigner(keys.privatePem, ORIGIN);
  const tiles = new MemoryArchiveTiles();
  for (let i = 1; i <= RECORDS; i++)
    await log.append(auditRecord(i, { crn: names(i), at: at(i), requestId: `req-${i}` }));
  const grown = await log.growTree();
  if (grown.root) await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
  // Records 1..512 archived, and let go of by the store: the answer is from both.
  await writeArchive(auditHashes, log, tiles, 512, note, [note], HELD_ARCHIVE_LOCK);
  await log.forget(512);
  // A witness's cosignature on the checkpoint: carried, and not the log's to check.
  const newest = await log.newestCheckpoint({ withNote: true });
  if (newest === undefined) throw new Error('no checkpoint');
  await log.addCosignatures(newest, [`— witness.example/w1 ${Buffer.alloc(76, 7).toString('base64')}`]);
  const list = await disclosuresOf({
    hashes: auditHashes,
    log,
    keys: [note],
    archive: tiles,
    spill: spillFiles(),
  }).of(CRN, {});
  const pieces: string[] = [];
  for await (const piece of contentText({ crn: CRN, case: null, disclosures: list })) pieces.push(piece);
  text = pieces.join('');
});

afterAll(() => {
  log?.close();
  rmSync(dir, { recursive: true, force: true });
});

const written = (): Written => JSON.parse(text) as Written;
const check = (answer: Written | string, keys = [note]) =>
  verifyAnswer(readAnswer(typeof answer === 'string' ? answer : JSON.stringify(answer)), keys, auditHashes);

/** The error a check throws. */
function refusal(answer: Written | string, keys = [note]): Error {
  try {
    check(answer, keys);
  } catch (error) {
    return error as Error;
  }
  throw new Error('the answer was accepted');
}

/** The answer's proof's hashes, each as base64 of its own. */
const hashesOf = (answer: Written) => Buffer.from(answer.content.proof?.hashes ?? '', 'base64');
const withHashes = (answer: Written, hashes: Uint8Array): Written => {
  const proof = answer.content.proof as { checkpoint: string; hashes: string };
  return {
    content: { ...answer.content, proof: { ...proof, hashes: Buffer.from(hashes).toString('base64') } },
  };
};
/** Two losses of the trail, as an answer states them. */
const GAPS = [
  { from: null, to: '2026-03-01T02:00:00.000Z', recordsLost: 7, reason: 'restored from the first backup' },
  {
    from: '2026-11-10T04:00:00.000Z',
    to: '2026-11-10T05:10:00.000Z',
    recordsLost: 212,
    reason: 'restored from the 04:00 backup (INC-1234)',
  },
];
const sizeOf = (answer: Written) => Number(answer.content.proof?.checkpoint.split('\n')[1]);

describe('a saved subject access answer', () => {
  it('is accepted as serve writes it: every disclosure proved, from the archive and the store', () => {
    const answer = written();
    const disclosures = answer.content.disclosures;
    const expected = Array.from({ length: RECORDS }, (_, k) => k + 1).filter((i) => names(i) === CRN);
    expect(disclosures.map((d) => d.index)).toEqual(expected.map((seq) => seq - 1));
    expect(expected.some((seq) => seq <= 512) && expected.some((seq) => seq > 512)).toBe(true);
    expect(answer.content.proof?.checkpoint).toContain('— witness.example/w1 ');
    expect(check(text)).toEqual({
      crn: CRN,
      gaps: [],
      disclosures: expected.length,
      checkpoint: { origin: ORIGIN, size: RECORDS },
    });
  });

  it('is refused when any one hash is changed, naming the first disclosure whose proof reads it', () => {
    const answer = written();
    const indexes = answer.content.disclosures.map((d) => d.index as number);
    const size = sizeOf(answer);
    const stored = [...batchProofIndexes(indexes, size)];
    const hashes = hashesOf(answer);
    expect(hashes.length).toBe(stored.length * 32);
    /** The stored hashes each disclosure's inclusion proof reads (tlog.ProveRecord's). */
    const reads = indexes.map(
      (index) =>
        new Set(
          inclusionRanges(index, size).flatMap((range) => subtreesOf(range).map((p) => storedIndexOf(p))),
        ),
    );
    for (const [k, storedIndex] of stored.entries()) {
      const changed = Buffer.from(hashes);
      changed[k * 32 + 7] = (changed[k * 32 + 7] ?? 0) ^ 1;
      const error = refusal(withHashes(answer, changed));
      expect(error).toBeInstanceOf(AnswerNotProvedError);
      const first = reads.findIndex((read) => read.has(storedIndex));
      expect(first, `hash ${k} (stored ${storedIndex}) is read by no disclosure`).toBeGreaterThanOrEqual(0);
      const named = (error as AnswerNotProvedError).disclosure;
      expect(named).toEqual({
        position: first + 1,
        of: indexes.length,
        index: indexes[first],
        requestId: `req-${(indexes[first] as number) + 1}`,
      });
      expect(error.message).toBe(
        `disclosure ${first + 1} of ${indexes.length} (index ${indexes[first]}, requestId "req-${(indexes[first] as number) + 1}") is not proved: its entry and the proof's hashes do not make the root the checkpoint of ${size} records signs (the entry or a hash was changed)`,
      );
    }
  });

  it('is refused when one entry is changed, naming that disclosure', () => {
    const answer = written();
    const at3 = answer.content.disclosures[3] as Json;
    const entry = Buffer.from(at3.entry as string, 'base64')
      .toString('utf8')
      .replace('"client-', '"clienT-');
    at3.entry = Buffer.from(entry).toString('base64');
    const error = refusal(answer) as AnswerNotProvedError;
    expect(error).toBeInstanceOf(AnswerNotProvedError);
    expect(error.disclosure?.position).toBe(4);
    expect(error.message).toMatch(/^disclosure 4 of \d+ \(index 27, requestId "req-28"\) is not proved: /);
  });

  it.each([
    ['time', '2026-01-01T00:00:00.000Z'],
    ['requestId', 'req-another'],
    ['operation', 'getRiskScores'],
    ['recipient', 'someone-else'],
    ['onBehalfOf', 'jane.doe@justice.example'],
    ['status', 403],
  ])('is refused when a disclosure shows a %s its entry does not say', (field, value) => {
    const answer = written();
    const fifth = answer.content.disclosures[4] as Json;
    const shown = fifth[field];
    fifth[field] = value;
    const error = refusal(answer) as AnswerNotProvedError;
    expect(error).toBeInstanceOf(AnswerNotProvedError);
    expect(error.disclosure?.position).toBe(5);
    expect(error.message).toContain(
      `is not what its entry says: its ${field} is ${JSON.stringify(value)}, its entry says ${JSON.stringify(shown)}`,
    );
  });

  it("is refused when its entries name another crn than the answer's", () => {
    const answer = written();
    answer.content.crn = 'A000001';
    expect(refusal(answer).message).toMatch(
      /^disclosure 1 of \d+ .* is not what its entry says: its entry names the crn "X123456", not the answer's "A000001"$/,
    );
  });

  it('is refused when an entry proved in the tree is not the record shown: another index, no record, not UTF-8', () => {
    const record = (seq: number) =>
      Buffer.from(
        auditEntryOf({
          ...auditRecord(seq, { crn: CRN, requestId: `req-${seq}` }),
          version: 4,
          seq,
          previousHash: '0'.repeat(64),
          hash: '',
        }) as string,
      );
    const shown = (seq: number, index: number) => {
      const r = auditRecord(seq, { crn: CRN, requestId: `req-${seq}` });
      const { requestId, operation, onBehalfOf, status } = r;
      return {
        time: r.at.toISOString(),
        requestId,
        operation,
        recipient: r.clientId,
        onBehalfOf,
        status,
        index,
      };
    };
    // Record 2 at leaf 1, as it should be, is proved and shown as it says.
    expect(check(signedAnswer([record(1), record(2), record(3)], [1], [shown(2, 1)])).disclosures).toBe(1);
    // Record 5's text at leaf 1: proved, but not record 2.
    expect(refusal(signedAnswer([record(1), record(5), record(3)], [1], [shown(5, 1)])).message).toBe(
      'disclosure 1 of 1 (index 1, requestId "req-5") is not what its entry says: its index is 1, its entry is record 5 (index 4)',
    );
    expect(
      refusal(signedAnswer([record(1), Buffer.from('["not a record"]')], [1], [shown(2, 1)])).message,
    ).toMatch(/is not what its entry says: its entry is not an audit record$/);
    expect(refusal(signedAnswer([record(1), Buffer.from([0xff, 0xfe])], [1], [shown(2, 1)])).message).toMatch(
      /is not what its entry says: its entry is not UTF-8 text, so no audit record$/,
    );
  });

  it('is refused when its checkpoint is signed by another key, or checked with another', async () => {
    const other = noteSigner((await generateCheckpointKeys()).privatePem, ORIGIN);
    expect(refusal(text, [other]).message).toMatch(/^the answer's checkpoint: /);
    const answer = written();
    const proof = answer.content.proof as { checkpoint: string; hashes: string };
    proof.checkpoint = signNote(noteTextOf(proof.checkpoint) as string, other);
    const error = refusal(answer);
    expect(error).toBeInstanceOf(AnswerNotProvedError);
    expect((error as AnswerNotProvedError).disclosure).toBeUndefined();
    expect(error.message).toMatch(/^the answer's checkpoint: /);
    expect(check(answer, [other]).disclosures).toBe(answer.content.disclosures.length);
  });

  it('is refused with a hash too few or too many', () => {
    const answer = written();
    const hashes = hashesOf(answer);
    const need = hashes.length / 32;
    expect(refusal(withHashes(answer, hashes.subarray(0, hashes.length - 32))).message).toBe(
      `the proof holds ${need - 1} hashes, and its disclosures' proofs in the tree of ${RECORDS} need ${need}: hashes were added or left out`,
    );
    expect(refusal(withHashes(answer, Buffer.concat([hashes, hashes.subarray(0, 32)]))).message).toMatch(
      new RegExp(`^the proof holds ${need + 1} hashes, .* need ${need}:`),
    );
    expect(refusal(withHashes(answer, hashes.subarray(0, hashes.length - 1))).message).toBe(
      `the proof's hashes are ${hashes.length - 1} bytes, not a whole number of 32-byte hashes`,
    );
  });

  it('is refused with its disclosures out of order, or one twice, naming where', () => {
    const answer = written();
    const list = answer.content.disclosures;
    [list[2], list[3]] = [list[3] as Json, list[2] as Json];
    expect(refusal(answer).message).toMatch(
      /^disclosure 4 of \d+ \(index 20, requestId "req-21"\) is not after the one before it \(index 27\)/,
    );
    const twice = written();
    twice.content.disclosures.splice(3, 0, twice.content.disclosures[2] as Json);
    expect((refusal(twice) as AnswerNotProvedError).disclosure?.position).toBe(4);
    const past = written();
    (past.content.disclosures.at(-1) as Json).index = RECORDS;
    expect(refusal(past).message).toMatch(/is not in the tree of 700 records the checkpoint signs$/);
  });

  it('of no disclosures has nothing to prove, and carries no proof', () => {
    expect(check({ content: { crn: CRN, disclosures: [] } })).toEqual({ crn: CRN, disclosures: 0 });
  });

  it('carries "gaps":[] as serve writes it, and hands back the gaps an answer states, read, not proved', () => {
    expect(written().content.gaps).toEqual([]);
    expect(check(written()).gaps).toEqual([]);
    const stated = written();
    stated.content.gaps = GAPS;
    const verified = check(stated);
    expect(verified.gaps).toEqual(GAPS);
    expect(verified.disclosures).toBe(written().content.disclosures.length);
    expect(check({ content: { crn: CRN, gaps: GAPS, disclosures: [] } })).toEqual({
      crn: CRN,
      gaps: GAPS,
      disclosures: 0,
    });
    // Saved before answers stated gaps: none stated, and none claimed.
    const older = written();
    delete older.content.gaps;
    expect(check(older)).not.toHaveProperty('gaps');
  });

  it.each([
    ['not a list', {}, /^content\.gaps is not a list$/],
    ['a gap not an object', ['2026-11-10'], /^content\.gaps\[0\] is not an object$/],
    [
      'from a number',
      [{ ...GAPS[1], from: 1 }],
      /^content\.gaps\[0\]\.from is not a time \(ISO 8601 UTC\) or null$/,
    ],
    [
      'from a day, not a time',
      [{ ...GAPS[1], from: '2026-11-10' }],
      /^content\.gaps\[0\]\.from is not a time/,
    ],
    [
      'to null',
      [GAPS[0], { ...GAPS[1], to: null }],
      /^content\.gaps\[1\]\.to is not a time \(ISO 8601 UTC\)$/,
    ],
    [
      'to not UTC',
      [{ ...GAPS[1], to: '2026-11-10T05:10:00.000+01:00' }],
      /^content\.gaps\[0\]\.to is not a time/,
    ],
    ['to no date', [{ ...GAPS[1], to: '2026-02-30T05:10:00.000Z' }], /^content\.gaps\[0\]\.to is not a time/],
    [
      'recordsLost a string',
      [{ ...GAPS[1], recordsLost: '12' }],
      /^content\.gaps\[0\]\.recordsLost is not a whole number above 0$/,
    ],
    ['recordsLost 0', [{ ...GAPS[1], recordsLost: 0 }], /recordsLost is not a whole number above 0$/],
    [
      'recordsLost a fraction',
      [{ ...GAPS[1], recordsLost: 1.5 }],
      /recordsLost is not a whole number above 0$/,
    ],
    [
      'no reason',
      [{ ...GAPS[1], reason: undefined }],
      /^content\.gaps\[0\]\.reason is not a string of text$/,
    ],
    ['an empty reason', [{ ...GAPS[1], reason: '' }], /reason is not a string of text$/],
  ])('is not an answer with gaps %s', (_, gaps, message) => {
    const malformed = written();
    malformed.content.gaps = gaps;
    expect(() => readAnswer(JSON.stringify(malformed))).toThrow(NotAnAnswerError);
    expect(() => readAnswer(JSON.stringify(malformed))).toThrow(message);
  });

  it.each([
    ['not JSON', '{"content":', /^it is not JSON/],
    ['not an object', '[1]', /^it has no "content" object$/],
    ['no crn', '{"content":{"disclosures":[]}}', /^content\.crn is not a string$/],
    ['no disclosures', '{"content":{"crn":"X123456"}}', /^content\.disclosures is not a list$/],
    ['a proof of nothing', '{"content":{"crn":"X123456","disclosures":[],"proof":{}}}', /no disclosure$/],
  ])('that is %s is not an answer', (_, given, message) => {
    expect(() => readAnswer(given)).toThrow(NotAnAnswerError);
    expect(() => readAnswer(given)).toThrow(message);
  });

  it('is not an answer with a disclosure missing a field, an entry not base64, or no proof', () => {
    const noStatus = written();
    delete (noStatus.content.disclosures[1] as Json).status;
    expect(() => readAnswer(JSON.stringify(noStatus))).toThrow(
      'content.disclosures[1].status is not a number',
    );
    const badEntry = written();
    (badEntry.content.disclosures[0] as Json).entry = 'not base64!';
    expect(() => readAnswer(JSON.stringify(badEntry))).toThrow('content.disclosures[0].entry is not base64');
    const badIndex = written();
    (badIndex.content.disclosures[0] as Json).index = -1;
    expect(() => readAnswer(JSON.stringify(badIndex))).toThrow('is not a whole number');
    const noProof = written();
    delete noProof.content.proof;
    expect(() => readAnswer(JSON.stringify(noProof))).toThrow('no content.proof');
    const badHashes = withHashes(written(), new Uint8Array(0));
    (badHashes.content.proof as { hashes: string }).hashes = '@@@@';
    expect(() => readAnswer(JSON.stringify(badHashes))).toThrow('content.proof.hashes is not base64');
  });
});

/**
 * An answer signed by the test's key over a tree of `entries` (any bytes) as leaves: the
 * disclosures at `indexes`, shown as `shown` says, each with its entry, and the proof's hashes.
 */
function signedAnswer(entries: Uint8Array[], indexes: number[], shown: object[]): Written {
  const { sha256 } = auditHashes;
  const { stored, frontier } = appendLeaves(
    sha256,
    0,
    [],
    entries.map((entry) => leafHash(sha256, entry)),
  );
  const root = rootOfFrontier(sha256, frontier);
  const checkpoint = signNote(
    `${ORIGIN}\n${entries.length}\n${Buffer.from(root).toString('base64')}\n`,
    note,
  );
  const hashes = Buffer.concat(
    [...batchProofIndexes(indexes, entries.length)].map((i) => stored[i] as Uint8Array),
  );
  return {
    content: {
      crn: CRN,
      disclosures: indexes.map((index, k) => ({
        ...shown[k],
        entry: Buffer.from(entries[index] as Uint8Array).toString('base64'),
      })),
      proof: { checkpoint, hashes: hashes.toString('base64') },
    },
  };
}
