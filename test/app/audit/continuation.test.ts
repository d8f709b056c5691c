import { describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { sha256Bytes, sha256Hex } from '../../../src/adapters/shared/sha256.js';
import {
  ContinuationError,
  keysOfEveryOrigin,
  keysOfTrail,
  openContinuation,
  openContinuations,
  originAt,
  signContinuation,
  trustedContinuations,
} from '../../../src/app/audit/continuation.js';
import { noteVerifier } from '../../../src/app/composition/audit-keys.js';
import { chainRecord, GENESIS_HASH } from '../../../src/domain/audit/chain.js';
import { continuationRecord, type TrailContinuation } from '../../../src/domain/audit/continuation.js';
import type { StoredAuditRecord } from '../../../src/domain/audit/record.js';
import { verifierKeyLine } from '../../../src/tlog/note.js';

/** A continuation's statement signed by the log's key under the new origin, opened with the log's keys whatever they are named. */

const A = 'case-read.test.example/audit';
const B = 'case-read.test.example/audit-2';
const C = 'case-read.test.example/audit-3';

// Each log its own key (witnesses know a log by its key).
const keyOf = new Map([
  [A, await generateCheckpointKeys()],
  [B, await generateCheckpointKeys()],
  [C, await generateCheckpointKeys()],
]);
const signer = async (origin: string) =>
  (await checkpointSigner(keyOf.get(origin)?.privatePem ?? '', origin)).note;
const other = await generateCheckpointKeys();

/** The statement of a continuation from `previous` to `origin`, each log's verifier key stated. */
function statement(over: Partial<TrailContinuation> = {}): TrailContinuation {
  const origin = over.origin ?? B;
  const previous = over.previous ?? A;
  return {
    origin,
    vkey: vkeyOf(origin),
    previous,
    previousVkey: vkeyOf(previous),
    kept: 3,
    held: 10,
    lastKept: new Date('2026-12-02T04:00:00.000Z'),
    broke: new Date('2026-12-02T05:00:00.000Z'),
    reason: 'restored from backup',
    ...over,
  };
}

const vkeyOf = (origin: string) => {
  const key = signerOf.get(origin);
  if (key === undefined) throw new Error('no key');
  return verifierKeyLine(sha256Bytes, key.name, key.publicKey);
};
const keyA = await signer(A);
const keyB = await signer(B);
const keyC = await signer(C);
const signerOf = new Map([
  [A, keyA],
  [B, keyB],
  [C, keyC],
]);
/** The public keys a reader holds: each log's (names do not matter: they are renamed to each origin). */
const logKeys = [noteVerifier(keyA), noteVerifier(keyB)];

/** The record at `seq` (else `kept + 1`) carrying the statement signed by `by` (else the two logs' keys). */
function carried(
  c: TrailContinuation,
  seq = c.kept + 1,
  by = { signer: signerOf.get(c.origin), previous: signerOf.get(c.previous) },
): StoredAuditRecord {
  if (by.signer === undefined || by.previous === undefined) throw new Error('no key');
  const note = signContinuation(c, by.signer, by.previous);
  return chainRecord(continuationRecord(c, note, `r-${seq}`), seq, GENESIS_HASH, sha256Hex);
}

describe('a continuation opened', () => {
  it('with either log key under any name: its statement, where it is, and what was lost', () => {
    const opened = openContinuation(carried(statement()), logKeys, sha256Bytes);
    expect(opened).toMatchObject({ origin: B, previous: A, kept: 3, held: 10, lost: 7, seq: 4 });
    // Either log's key alone opens it: each vouches for the continuation.
    for (const key of [keyA, keyB])
      expect(openContinuation(carried(statement()), [noteVerifier(key)], sha256Bytes).seq).toBe(4);
    // Read without keys (audit verify given none): the same statement.
    expect(openContinuation(carried(statement()), undefined, sha256Bytes).lost).toBe(7);
  });

  it("is refused when neither log's key signed it", async () => {
    const foreign = async (origin: string) => (await checkpointSigner(other.privatePem, origin)).note;
    const c = statement();
    const record = carried(c, 4, { signer: await foreign(B), previous: await foreign(A) });
    expect(() => openContinuation(record, logKeys, sha256Bytes)).toThrow(
      /does not verify with the log's keys/,
    );
    expect(() => openContinuation(carried(c), [noteVerifier(keyC)], sha256Bytes)).toThrow(
      /no signature on the note is by a key given/,
    );
  });

  it('refuses a changed statement, another place, another time', () => {
    const c = statement();
    const record = carried(c);
    const changed = {
      ...record,
      continuation: (record.continuation as string).replace('held 10', 'held 11'),
    };
    expect(() => openContinuation(changed, logKeys, sha256Bytes)).toThrow(/the note was changed/);
    expect(() => openContinuation(changed, undefined, sha256Bytes)).not.toThrow();
    expect(() => openContinuation(carried(c, 9), logKeys, sha256Bytes)).toThrow(/is not record 4/);
    expect(() => openContinuation({ ...record, at: new Date() }, undefined, sha256Bytes)).toThrow(
      /not dated at the break/,
    );
    // Keys named by other logs than the statement's are refused before anything is signed.
    expect(() => signContinuation(c, keyA, keyB)).toThrow(ContinuationError);
  });

  it('a second break follows the first: the logs chain, each checkpoint size has its origin', () => {
    const first = carried(statement());
    const second = carried(statement({ origin: C, previous: B, kept: 20, held: 25 }));
    const opened = openContinuations([first, second], logKeys, sha256Bytes);
    expect(opened.map((c) => c.origin)).toEqual([B, C]);
    expect([1, 3, 4, 20, 21, 99].map((size) => originAt(size, opened, 'unused'))).toEqual([A, A, B, B, C, C]);
    expect(originAt(5, [], A)).toBe(A);
    const astray = carried(statement({ origin: C, previous: A, kept: 20, held: 25 }));
    expect(() => openContinuations([first, astray], undefined, sha256Bytes)).toThrow(
      /began case-read.test.example\/audit-2/,
    );
    const named = keysOfEveryOrigin([noteVerifier(keyC)], opened, sha256Bytes).map((k) => k.name);
    expect(named).toEqual([C, A, B]);
  });

  it("learns every log's key from the statements, anchored in a key given, and names them by every origin", async () => {
    const log = (records: StoredAuditRecord[]) => ({ continuations: async () => records });
    const first = carried(statement());
    const second = carried(statement({ origin: C, previous: B, kept: 20, held: 25 }));
    const hex = (k: { publicKey: Uint8Array }) => Buffer.from(k.publicKey).toString('hex');
    // Only the newest log's key given (its policy's log line): A's and B's are learned from the statements.
    const named = await keysOfTrail(log([first, second]), [noteVerifier(keyC)], sha256Bytes, noteVerifier);
    const has = (key: typeof keyA, name: string) => named.some((k) => k.name === name && hex(k) === hex(key));
    expect([has(keyA, A), has(keyB, B), has(keyC, C)]).toEqual([true, true, true]);
    // Anchored at the oldest key as well: an auditor who held A's key reaches the newest.
    expect(
      trustedContinuations([first, second], [noteVerifier(keyA)], sha256Bytes, noteVerifier).learned,
    ).toHaveLength(4);
    expect(await keysOfTrail(log([]), [noteVerifier(keyC)], sha256Bytes, noteVerifier)).toHaveLength(1);
    expect(await keysOfTrail(log([first]), [], sha256Bytes, noteVerifier)).toEqual([]);
    // No key given reaches them.
    const stranger = noteVerifier((await checkpointSigner(other.privatePem, C)).note);
    await expect(keysOfTrail(log([first, second]), [stranger], sha256Bytes, noteVerifier)).rejects.toThrow(
      /signed by keys none given reaches/,
    );
    // A statement naming a key that did not sign it.
    const lying = carried({ ...statement(), vkey: verifierKeyLine(sha256Bytes, B, stranger.publicKey) });
    expect(() => trustedContinuations([lying], [noteVerifier(keyA)], sha256Bytes, noteVerifier)).toThrow(
      /is not signed by the key it states for case-read.test.example\/audit-2/,
    );
  });
});
