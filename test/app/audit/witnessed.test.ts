import { describe, expect, it } from 'vitest';
import {
  type CosignerSigner,
  cosignerFromSkey,
  cosignerVerifier,
  newCosignerKey,
} from '../../../src/adapters/crypto/cosigner-keys.js';
import { sha256Bytes } from '../../../src/adapters/shared/sha256.js';
import { AuditProofError } from '../../../src/app/audit/proving.js';
import {
  ageOf,
  cosignerNames,
  notWitnessedReason,
  type PolicyCheck,
  policyLogKeys,
  requireTrailLog,
  WitnessPolicyError,
  witnessedCheckpoints,
} from '../../../src/app/audit/witnessed.js';
import { noteVerifier } from '../../../src/app/composition/audit-keys.js';
import type { AuditCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { cosignatureLine } from '../../../src/tlog/cosignature.js';
import {
  checkpointBodyOf,
  checkpointText,
  type NoteVerifier,
  type NoteVerifierKey,
  noteTextOf,
  signNote,
  verifierKeyLine,
} from '../../../src/tlog/note.js';
import { parseWitnessPolicy, type WitnessPolicy } from '../../../src/tlog/policy.js';

/**
 * The newest witnessed checkpoint of a trail (src/app/audit/witnessed.ts): found in one pass,
 * the cosignatures of only the few that name the quorum's witnesses checked, a forged one
 * refused and the older one that met the quorum found behind it.
 */

const origin = 'case-read.test/audit';
const logKey = { name: origin, keyId: 1, publicKey: new Uint8Array(32).fill(7) };
const logVkey = verifierKeyLine(sha256Bytes, origin, logKey.publicKey);
const witness = (name: string) => cosignerFromSkey(newCosignerKey(`witness.example/${name}`).skey);
const [a, b, c] = [witness('a'), witness('b'), witness('c')] as [
  CosignerSigner,
  CosignerSigner,
  CosignerSigner,
];

const parsed = (text: string): WitnessPolicy => {
  const policy = parseWitnessPolicy(sha256Bytes, text);
  if ('invalid' in policy) throw new Error(policy.invalid);
  return policy;
};

/** A check of 2 of (a, b, c) whose cosignature verifications are counted. */
function countingCheck(): PolicyCheck & { readonly checked: () => number } {
  let count = 0;
  const policy = parsed(
    [
      `log ${logVkey}`,
      `witness a ${a.vkey}`,
      `witness b ${b.vkey}`,
      `witness c ${c.vkey}`,
      'group g 2 a b c',
      'quorum g',
    ].join('\n'),
  );
  return {
    policy,
    source: '--policy test',
    verifierOf: (key: NoteVerifierKey): NoteVerifier => {
      const verifier = cosignerVerifier(key);
      return {
        ...verifier,
        verify: (message, signature) => {
          count++;
          return verifier.verify(message, signature);
        },
      };
    },
    checked: () => count,
  };
}

/** A stored checkpoint of `size` (its note signed by a stand-in log key), cosigned by `by`. */
function checkpoint(
  size: number,
  by: readonly CosignerSigner[],
  forged: readonly CosignerSigner[] = [],
): AuditCheckpoint {
  const note = signNote(checkpointText(origin, size, new Uint8Array(32).fill(size % 256)), {
    name: origin,
    keyId: 1,
    sign: () => new Uint8Array(64),
  });
  const text = noteTextOf(note) as string;
  const lines = [
    ...by.map((w) => cosignatureLine(w, text, 1_700_000_000 + size).trimEnd()),
    ...forged.map((w) => cosignatureLine(w, text.replace(`\n${size}\n`, `\n${size + 1}\n`), 1).trimEnd()),
  ];
  return {
    seq: size,
    head: '0'.repeat(64),
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, size)).toISOString(),
    keyId: 'k',
    signature: 'c2ln',
    note,
    ...(lines.length > 0 ? { cosignatures: lines } : {}),
  };
}

const storeOf = (checkpoints: readonly AuditCheckpoint[]) => ({
  async *checkpoints() {
    yield* checkpoints;
  },
});

/** Opens a note as the commands do, its body read (the log's own signature is stood in for here). */
const open = (note: string) => {
  const body = checkpointBodyOf(note);
  if ('invalid' in body) throw new AuditProofError(body.invalid);
  return body;
};
const invalid = (reason: string) => new AuditProofError(reason);

describe('witnessedCheckpoints', () => {
  it('checks the cosignatures of the newest and of the newest naming the quorum, not of every checkpoint', async () => {
    const check = countingCheck();
    const trail = Array.from({ length: 200 }, (_, i) => checkpoint(i + 1, i < 150 ? [a, b] : [c]));
    const found = await witnessedCheckpoints(storeOf(trail), check, open, invalid);
    expect(found.newest?.body.size).toBe(200);
    expect(found.newest?.witnessing).toEqual({ witnesses: ['c'], met: false });
    expect(found.met?.body.size).toBe(150);
    expect(found.met?.witnessing).toEqual({ witnesses: ['a', 'b'], met: true });
    // Two checkpoints' cosignatures looked at, not two hundred.
    expect(check.checked()).toBeLessThanOrEqual(6);
    expect(notWitnessedReason(found, check, new Date('2026-01-01T01:00:00Z'))).toBe(
      'the newest checkpoint (200 records, seq 200, 2026-01-01T00:03:20.000Z) does not meet the quorum 2 of (a, b, c) of --policy test: cosigned by c; the newest checkpoint that met it: 150 records, signed 2026-01-01T00:02:30.000Z, 57 min ago, cosigned by a, b',
    );
  });

  it('refuses a forged cosignature and finds the older checkpoint that met the quorum behind it', async () => {
    const check = countingCheck();
    const trail = [checkpoint(10, [a, c]), checkpoint(20, [a], [b]), checkpoint(30, [c])];
    const found = await witnessedCheckpoints(storeOf(trail), check, open, invalid);
    expect(found.met?.body.size).toBe(10);
    expect(found.refused?.body.size).toBe(20);
    expect(found.refused?.witnessing.refused).toMatch(/^the cosignature of witness b does not verify/);
    expect(notWitnessedReason(found, check, new Date('2026-01-01T00:01:00Z'))).toMatch(
      /cosigned by c; a newer one than any that met it is refused \(20 records, seq 20\): the cosignature of witness b does not verify.*; the newest checkpoint that met it: 10 records/,
    );
  });

  it('says none met the quorum, and none when there is no checkpoint; a stored row that is not one is thrown', async () => {
    const check = countingCheck();
    const none = await witnessedCheckpoints(storeOf([checkpoint(5, [b])]), check, open, invalid);
    expect(none.met).toBeUndefined();
    expect(notWitnessedReason(none, check, new Date())).toMatch(
      /cosigned by b; no checkpoint of this trail ever met it$/,
    );
    expect(
      notWitnessedReason(await witnessedCheckpoints(storeOf([]), check, open, invalid), check, new Date()),
    ).toBe(
      'the store holds no checkpoint of the tree: nothing meets the quorum 2 of (a, b, c) of --policy test',
    );
    const broken = {
      async *checkpoints() {
        yield { invalid: 'row 3: seq is not a record number' };
      },
    };
    await expect(witnessedCheckpoints(broken, check, open, invalid)).rejects.toThrow(/row 3: seq is not/);
  });
});

describe("the policy's log line", () => {
  const key = { ...logKey, keyId: Number.parseInt(logVkey.split('+')[1] as string, 16) };

  it('must be this trail’s key: another key for the origin is refused naming the line', () => {
    const check = countingCheck();
    expect(() => requireTrailLog(check, [key])).not.toThrow();
    const other = { ...key, publicKey: new Uint8Array(32).fill(8) };
    expect(() => requireTrailLog(check, [other])).toThrow(
      new WitnessPolicyError(
        `--policy test is not this trail's policy: line 1: the log "${origin}" has a key that is not this trail's`,
      ),
    );
    // Any one of the keys given (a key rotated) will do.
    expect(() => requireTrailLog(check, [other, key])).not.toThrow();
  });

  it('gives the log’s keys to open checkpoints with when none was given', () => {
    const check = countingCheck();
    const keys = policyLogKeys(check, origin, noteVerifier);
    expect(keys.map((k) => [k.name, k.publicKey])).toEqual([[origin, logKey.publicKey]]);
    expect(() => policyLogKeys(check, 'another.test/log', noteVerifier)).toThrow(
      /no log line names this trail's origin "another\.test\/log"/,
    );
  });
});

describe('cosignerNames and ageOf', () => {
  it('names the keys the lines are signed under, each once', () => {
    const lines = checkpoint(3, [a, b]).cosignatures;
    expect(cosignerNames([...(lines ?? []), ...(lines ?? [])])).toEqual([
      'witness.example/a',
      'witness.example/b',
    ]);
    expect(cosignerNames(undefined)).toEqual([]);
  });

  it('says how long ago, in seconds, minutes, hours and days', () => {
    const now = new Date('2026-01-10T12:00:00Z');
    expect(ageOf('2026-01-10T11:59:20Z', now)).toBe('40 s');
    expect(ageOf('2026-01-10T11:48:00Z', now)).toBe('12 min');
    expect(ageOf('2026-01-10T08:55:00Z', now)).toBe('3 h 5 min');
    expect(ageOf('2026-01-08T08:00:00Z', now)).toBe('2 d 4 h');
    expect(ageOf('2026-01-10T12:00:05Z', now)).toBe('0 s');
  });
});
