import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import {
  cosignerFromSkey,
  cosignerVerifier,
  newCosignerKey,
} from '../../../src/adapters/crypto/cosigner-keys.js';
import { sha256Bytes, sha256Hex } from '../../../src/adapters/shared/sha256.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import type { TrailBehind } from '../../../src/app/audit/witness-standing.js';
import { AuditWitnessing, type WitnessOutcome } from '../../../src/app/audit/witnessing.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import type { CheckpointSigner } from '../../../src/ports/checkpoint-keys.js';
import type { WitnessAnswer, WitnessClient } from '../../../src/ports/witnesses.js';
import { cosignatureLine } from '../../../src/tlog/cosignature.js';
import { verifyConsistency } from '../../../src/tlog/merkle.js';
import { checkpointBodyOf, noteTextOf } from '../../../src/tlog/note.js';
import { parseWitnessPolicy, type WitnessPolicy } from '../../../src/tlog/policy.js';
import { parseAddCheckpointBody } from '../../../src/tlog/witness-protocol.js';
import { auditRecord } from '../../contract/audit-log.contract.js';

/**
 * The submitting loop (decisions §19) over a real SQLite trail, against witnesses scripted in the
 * test: each sends what C2SP tlog-witness asks (the size it holds, a consistency proof from it
 * that verifies), keeps only cosignatures that verify, follows a 409, and calls a witness that
 * holds more than the trail a refusal.
 */

const ORIGIN = 'case-read.test.example/audit';
let dir: string;
let log: SqliteAuditLog;
let signer: CheckpointSigner;
let logVkey: string;

/** A witness that answers as C2SP says, holding `size`, or as a test script overrides. */
class ScriptedWitness {
  readonly key: ReturnType<typeof cosignerFromSkey>;
  size = 0;
  calls: { old: number; proofOk: boolean; size: number }[] = [];
  /** An answer to give instead of the honest one, once each. */
  script: (WitnessAnswer | 'forge')[] = [];
  constructor(readonly label: string) {
    this.key = cosignerFromSkey(newCosignerKey(`witness.test/${label}`).skey);
  }

  answer(body: string): WitnessAnswer {
    const request = parseAddCheckpointBody(body);
    if ('invalid' in request) return { kind: 'refused', status: 400, detail: request.invalid };
    const checkpoint = checkpointBodyOf(request.note);
    if ('invalid' in checkpoint) return { kind: 'refused', status: 400, detail: checkpoint.invalid };
    const proofOk =
      request.old === 0
        ? request.proof.length === 0
        : verifyConsistency(
            sha256Bytes,
            request.old,
            checkpoint.size,
            rootAt(request.old),
            checkpoint.root,
            request.proof,
          );
    this.calls.push({ old: request.old, proofOk, size: checkpoint.size });
    const scripted = this.script.shift();
    const text = noteTextOf(request.note) as string;
    if (scripted === 'forge') {
      const line = cosignatureLine(this.key, text, 1_700_000_000);
      return { kind: 'cosigned', body: line.replace(/.{6}\n$/, 'AAAAAA\n') };
    }
    if (scripted !== undefined) return scripted;
    if (request.old !== this.size) return { kind: 'conflict', size: this.size };
    if (!proofOk) return { kind: 'refused', status: 422, detail: 'proof' };
    this.size = checkpoint.size;
    return { kind: 'cosigned', body: cosignatureLine(this.key, text, Math.floor(Date.now() / 1000)) };
  }
}

/** The root of the trail's tree at `size`, as the stored tree has it (what an honest witness held). */
const roots = new Map<number, Uint8Array>();
const rootAt = (size: number) => roots.get(size) ?? new Uint8Array(32);

async function checkpointAfter(records: number): Promise<number> {
  const base = (await log.head()).seq;
  for (let i = 1; i <= records; i++) void log.append(auditRecord(base + i));
  await log.flush();
  const grown = await log.growTree();
  roots.set(grown.size, grown.root as Uint8Array);
  await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
  return grown.size;
}

function policyOf(witnesses: readonly ScriptedWitness[], quorum: string): WitnessPolicy {
  const text = [
    `log ${logVkey}`,
    ...witnesses.map((w) => `witness ${w.label} ${w.key.vkey} https://${w.label}.test.example`),
    quorum,
  ].join('\n');
  const policy = parseWitnessPolicy(sha256Bytes, `${text}\n`);
  if ('invalid' in policy) throw new Error(policy.invalid);
  return policy;
}

function witnessingOf(
  witnesses: readonly ScriptedWitness[],
  quorum: string,
  roundGapMs = 0,
  /** Run before a witness answers (what another instance does meanwhile). */
  beforeAnswer: () => Promise<void> = async () => {},
) {
  const answered: { witness: string; outcome: WitnessOutcome; detail: Record<string, unknown> }[] = [];
  const quorums: { size: number; met: boolean; by: readonly string[] }[] = [];
  const behind: TrailBehind[] = [];
  const client: WitnessClient = {
    addCheckpoint: async (url, body, _signal) => {
      const witness = witnesses.find((w) => url === `https://${w.label}.test.example`);
      if (witness === undefined) throw new Error(`no witness at ${url}`);
      await beforeAnswer();
      return witness.answer(body);
    },
    close: async () => {},
  };
  const witnessing = new AuditWitnessing({
    store: log,
    hashes: { sha256: sha256Bytes, sha256Hex },
    policy: policyOf(witnesses, quorum),
    client,
    cosignerOf: cosignerVerifier,
    timeoutMs: 1000,
    everySeconds: 60,
    roundGapMs,
    out: {
      answered: (witness, outcome, detail) =>
        answered.push({ witness: witness.name, outcome, detail: { ...detail } }),
      quorum: (newest, met, by) => quorums.push({ size: newest.seq, met, by }),
      failed: (reason) => {
        throw new Error(reason);
      },
      behind: (found) => behind.push(found),
    },
  });
  return { witnessing, answered, quorums, behind };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-witnessing-'));
  log = SqliteAuditLog.open(join(dir, 'audit.db'));
  const keys = await generateCheckpointKeys();
  signer = await checkpointSigner(keys.privatePem, ORIGIN);
  const { verifierKeyLine } = await import('../../../src/tlog/note.js');
  logVkey = verifierKeyLine(sha256Bytes, ORIGIN, signer.note.publicKey);
  roots.clear();
});
afterEach(() => {
  log.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('submitting checkpoints to witnesses', () => {
  it('sends old 0 first, then a consistency proof from the size each cosigned; keeps what verifies', async () => {
    const w1 = new ScriptedWitness('w1');
    const w2 = new ScriptedWitness('w2');
    const { witnessing, answered, quorums } = witnessingOf([w1, w2], 'group both all w1 w2\nquorum both');
    const first = await checkpointAfter(10);
    await witnessing.nudge();
    await witnessing.settled();
    expect(w1.calls).toEqual([{ old: 0, proofOk: true, size: first }]);
    const stored = await log.newestCheckpoint({ withNote: true });
    expect(stored?.cosignatures).toHaveLength(2);
    expect(await log.witnessSizes()).toEqual(
      new Map([
        [w1.key.vkey, first],
        [w2.key.vkey, first],
      ]),
    );
    expect(quorums.at(-1)).toEqual({ size: first, met: true, by: ['w1', 'w2'] });

    const second = await checkpointAfter(7);
    await witnessing.nudge();
    await witnessing.settled();
    expect(w2.calls.at(-1)).toEqual({ old: first, proofOk: true, size: second });
    expect(answered.map((a) => a.outcome)).toEqual(['cosigned', 'cosigned', 'cosigned', 'cosigned']);
    // Cosigned already: a round asks nobody again.
    await witnessing.nudge();
    await witnessing.settled();
    expect(w1.calls).toHaveLength(2);
  });

  it('follows a 409 to the size the witness holds, and proves from it', async () => {
    const w1 = new ScriptedWitness('w1');
    const { witnessing, answered } = witnessingOf([w1], 'quorum w1');
    const first = await checkpointAfter(5);
    w1.size = first;
    roots.set(first, rootAt(first));
    const second = await checkpointAfter(9);
    await witnessing.nudge();
    await witnessing.settled();
    expect(w1.calls).toEqual([
      { old: 0, proofOk: true, size: second },
      { old: first, proofOk: true, size: second },
    ]);
    expect(answered.map((a) => a.outcome)).toEqual(['conflict', 'cosigned']);
    expect((await log.witnessSizes()).get(w1.key.vkey)).toBe(second);
  });

  it('refuses a witness that holds more than the trail (rolled back, or another trail) and keeps nothing', async () => {
    const w1 = new ScriptedWitness('w1');
    const { witnessing, answered, quorums } = witnessingOf([w1], 'quorum w1');
    await checkpointAfter(5);
    w1.size = 460;
    await witnessing.nudge();
    await witnessing.settled();
    expect(answered.map((a) => a.outcome)).toEqual(['conflict', 'refused']);
    expect(answered[1]?.detail.reason).toMatch(/holds 460 records, more than this trail's tree \(5\)/);
    expect((await log.newestCheckpoint())?.cosignatures ?? []).toEqual([]);
    expect(quorums.at(-1)?.met).toBe(false);
  });

  it('refuses a 200 whose cosignature does not verify, and a witness refusal is reported with its status', async () => {
    const w1 = new ScriptedWitness('w1');
    const { witnessing, answered } = witnessingOf([w1], 'quorum w1');
    await checkpointAfter(3);
    w1.script = ['forge'];
    await witnessing.nudge();
    await witnessing.settled();
    expect(answered.at(-1)).toMatchObject({ outcome: 'refused', detail: { status: 200 } });
    w1.script = [{ kind: 'refused', status: 422, detail: 'consistency proof does not verify' }];
    await witnessing.nudge();
    await witnessing.settled();
    expect(answered.at(-1)).toMatchObject({ outcome: 'refused', detail: { status: 422 } });
    expect((await log.newestCheckpoint())?.cosignatures ?? []).toEqual([]);
  });

  it('pauses a witness it cannot reach, and asks it again only after the pause', async () => {
    const w1 = new ScriptedWitness('w1');
    const w2 = new ScriptedWitness('w2');
    const { witnessing, answered, quorums } = witnessingOf([w1, w2], 'group any1 any w1 w2\nquorum any1');
    await checkpointAfter(4);
    w1.script = [{ kind: 'unreachable', reason: 'no answer within 1000 ms' }];
    await witnessing.nudge();
    await witnessing.settled();
    expect(answered.map((a) => `${a.witness} ${a.outcome}`).sort()).toEqual([
      'w1 unreachable',
      'w2 cosigned',
    ]);
    expect(quorums.at(-1)?.met).toBe(true);
    await checkpointAfter(2);
    await witnessing.nudge();
    await witnessing.settled();
    // w1 is still pausing: only w2 was asked about the new checkpoint.
    expect(w1.calls).toHaveLength(1);
    expect(w2.calls).toHaveLength(2);
    await witnessing.stop();
  });

  it('sends checkpoints signed faster than the round gap as the newest of them, not each one', async () => {
    const w1 = new ScriptedWitness('w1');
    const { witnessing } = witnessingOf([w1], 'quorum w1', 60_000);
    const first = await checkpointAfter(3);
    await witnessing.nudge();
    await witnessing.settled();
    expect(w1.calls.map((c) => c.size)).toEqual([first]);
    // Within the gap: the new checkpoint waits for the next round, it is not sent now.
    await checkpointAfter(3);
    await witnessing.nudge();
    await witnessing.settled();
    expect(w1.calls.map((c) => c.size)).toEqual([first]);
    await witnessing.stop();
  });
});

describe('a trail behind its witnesses (a store restored short)', () => {
  const TWO_OF_THREE = 'group two 2 w1 w2 w3\nquorum two';

  /** Three witnesses that cosigned the trail at `size`, as a store restored to that size left it. */
  async function cosignedAt(records: number) {
    const witnesses = [new ScriptedWitness('w1'), new ScriptedWitness('w2'), new ScriptedWitness('w3')];
    const size = await checkpointAfter(records);
    const first = witnessingOf(witnesses, TWO_OF_THREE);
    await first.witnessing.nudge();
    await first.witnessing.settled();
    expect(first.quorums.at(-1)?.met).toBe(true);
    return { witnesses, size };
  }

  it('at start, a quorum holding more records than the store is found, naming both sizes and each witness, and no witness moves', async () => {
    const { witnesses, size } = await cosignedAt(5);
    // The witnesses went on to 9 records, which the restored store no longer has.
    const [w1, w2, w3] = witnesses as [ScriptedWitness, ScriptedWitness, ScriptedWitness];
    w1.size = 9;
    w2.size = 9;
    const { witnessing, behind } = witnessingOf(witnesses, TWO_OF_THREE);
    const found = await witnessing.probe();
    expect(found).toMatchObject({ storeSize: size, heldSize: 9, quorum: '2 of (w1, w2, w3)' });
    expect(found?.witnesses.map((w) => [w.name, w.standing.kind, w.standing.holds])).toEqual([
      ['w1', 'ahead', 9],
      ['w2', 'ahead', 9],
    ]);
    expect(witnessing.behind).toBe(found);
    expect(behind).toEqual([found]);
    // Asked, not moved: each still holds what it held.
    expect([w1.size, w2.size, w3.size]).toEqual([9, 9, size]);
  });

  it('one witness alone cannot stop the service: a quorum decides', async () => {
    const { witnesses } = await cosignedAt(5);
    (witnesses[0] as ScriptedWitness).size = 9;
    const { witnessing, behind } = witnessingOf(witnesses, TWO_OF_THREE);
    expect(await witnessing.probe()).toBeUndefined();
    expect(witnessing.behind).toBeUndefined();
    expect(behind).toEqual([]);
  });

  it('a quorum holding the same size with another root is found as another tree', async () => {
    const { witnesses, size } = await cosignedAt(5);
    // What they cosigned at that size had another root than the store's tree has now.
    roots.set(size, new Uint8Array(32).fill(7));
    const { witnessing } = witnessingOf(witnesses, TWO_OF_THREE);
    const found = await witnessing.probe();
    // The quorum as it was first met: two of the three, each holding `size` of another tree.
    expect(found?.witnesses).toHaveLength(2);
    for (const w of found?.witnesses ?? []) expect(w.standing).toEqual({ kind: 'forked', holds: size });
    expect(found?.storeSize).toBe(size);
  });

  it('while serving, the rounds find it once, and it stays found', async () => {
    const { witnesses } = await cosignedAt(5);
    const { witnessing, behind } = witnessingOf(witnesses, TWO_OF_THREE);
    expect(await witnessing.probe()).toBeUndefined();
    for (const w of witnesses) w.size = 40;
    await checkpointAfter(2);
    await witnessing.nudge();
    await witnessing.settled();
    expect(behind).toHaveLength(1);
    expect(behind[0]).toMatchObject({ storeSize: 7, heldSize: 40 });
    await checkpointAfter(1);
    await witnessing.nudge();
    await witnessing.settled();
    expect(behind).toHaveLength(1);
    expect(witnessing.behind).toBe(behind[0]);
  });

  it('another instance growing the trail and having it cosigned during the round is not taken for a restore', async () => {
    const { witnesses } = await cosignedAt(5);
    let growing: Promise<void> | undefined;
    const { witnessing, behind } = witnessingOf(witnesses, TWO_OF_THREE, 0, () => {
      // Another instance on the same store, before any witness answers: the tree grows to 9,
      // and the witnesses cosign it.
      growing ??= (async () => {
        const size = await checkpointAfter(4);
        for (const w of witnesses) w.size = size;
      })();
      return growing;
    });
    expect(await witnessing.probe()).toBeUndefined();
    expect(behind).toEqual([]);
  });

  it('a policy whose quorum is none decides nothing', async () => {
    const { witnesses } = await cosignedAt(5);
    for (const w of witnesses) w.size = 9;
    const { witnessing } = witnessingOf(witnesses, 'quorum none');
    expect(await witnessing.probe()).toBeUndefined();
  });
});
