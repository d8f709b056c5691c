import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { verifyNoteSignature } from '../../src/adapters/crypto/note-keys.js';
import { sha256Bytes } from '../../src/adapters/shared/sha256.js';
import { addCheckpoint, type WitnessParts } from '../../src/app/witness/add-checkpoint.js';
import type { WitnessedCheckpoint, WitnessState } from '../../src/ports/witness-state.js';
import { type NoteVerifier, parseVerifierKey } from '../../src/tlog/note.js';
import { isCosignature, TestLog } from '../app/witness/support.js';
import { hostile } from './arbitraries.js';
import { testNoteKey } from './note-arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * The witness's judgement of add-checkpoint requests as they arrive
 * (src/app/witness/add-checkpoint.ts), against logs written from the specs
 * (test/app/witness/support.ts): whatever is sent, in whatever order, a witness answers with
 * one of the spec's statuses, and never cosigns a checkpoint that does not extend the last one
 * it cosigned.
 */

/** A witness's record in memory, its compare-and-set as the port says. */
function memoryState(): WitnessState & { readonly held: Map<string, WitnessedCheckpoint> } {
  const held = new Map<string, WitnessedCheckpoint>();
  return {
    held,
    description: 'memory',
    close: async () => {},
    latest: async (origin) => held.get(origin),
    advance: async (origin, expected, next) => {
      const now = held.get(origin);
      const same =
        now === undefined
          ? expected === undefined
          : expected !== undefined &&
            expected.size === now.size &&
            Buffer.from(expected.root).equals(Buffer.from(now.root));
      if (!same) return now;
      held.set(origin, next);
      return true;
    },
  };
}

const ORIGIN = 'log.test.example/log';
const cosigner = testNoteKey('witness.test.example/w1', 0x04);
const cosignerVkey = cosigner.vkey;

function verifierOf(vkey: string): NoteVerifier {
  const key = parseVerifierKey(sha256Bytes, vkey);
  if ('invalid' in key) throw new Error(key.invalid);
  return { ...key, verify: (message, signature) => verifyNoteSignature(key, message, signature) };
}

function witnessOf(log: TestLog): { parts: WitnessParts; state: ReturnType<typeof memoryState> } {
  const state = memoryState();
  return {
    state,
    parts: {
      sha256: sha256Bytes,
      logs: new Map([[ORIGIN, [verifierOf(log.vkey)]]]),
      state,
      cosigner,
      now: () => Math.floor(Date.now() / 1000),
    },
  };
}

const STATUSES = [200, 400, 403, 404, 409, 422];

/** One submission: from the true history or a fork of it (both signed by the log's key), with the proof of one or the other. */
const submission = fc.record({
  history: fc.constantFrom('main', 'fork'),
  proofFrom: fc.constantFrom('main', 'main', 'fork'),
  old: fc.nat(40),
  size: fc.nat(40),
  oldFromHeld: fc.boolean(),
});

describe('add-checkpoint, judged as requests arrive', () => {
  test.prop([fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 5 })], runs(40))(
    'a log growing by any steps, each sent from the size held with its proof, is cosigned every time',
    async (steps) => {
      const log = new TestLog(ORIGIN);
      const { parts, state } = witnessOf(log);
      let held = 0;
      for (const step of steps) {
        const size = held + step;
        const answer = await addCheckpoint(parts, log.body(held, size));
        expect(answer).toMatchObject({ status: 200, origin: ORIGIN, size });
        if (answer.status === 200)
          expect(isCosignature(answer.cosignature, cosignerVkey, log.text(size))).toBe(true);
        expect(state.held.get(ORIGIN)?.size).toBe(size);
        held = size;
      }
    },
    TIMEOUT,
  );

  test.prop([fc.array(submission, { minLength: 1, maxLength: 12 })], runs(80))(
    'submissions from a log and a fork of it signed by the same key, in any order: only one history is ever cosigned, never moving back',
    async (sent) => {
      const main = new TestLog(ORIGIN);
      const fork = new TestLog(ORIGIN, 'fork');
      const { parts, state } = witnessOf(main);
      const cosigned: { size: number; history: string }[] = [];
      for (const s of sent) {
        const heldSize = state.held.get(ORIGIN)?.size ?? 0;
        const old = s.oldFromHeld ? heldSize : s.old;
        const size = Math.max(s.size, old);
        const tree = s.history === 'main' ? main : fork;
        const proofLog = s.proofFrom === 'main' ? main : fork;
        const body = main.body(old, size, {
          proof: proofLog.proof(old, size),
          note: main.checkpoint(size, tree.root(size)),
        });
        const answer = await addCheckpoint(parts, body);
        expect(STATUSES).toContain(answer.status);
        if (answer.status === 200) cosigned.push({ size, history: size === 0 ? 'both' : s.history });
      }
      const sizes = cosigned.map((c) => c.size);
      expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
      expect(new Set(cosigned.map((c) => c.history).filter((h) => h !== 'both')).size).toBeLessThanOrEqual(1);
    },
    TIMEOUT,
  );

  const log = new TestLog(ORIGIN);
  const bodies = fc
    .tuple(fc.nat(20), fc.integer({ min: 1, max: 20 }))
    .map(([old, grow]) => log.body(old, old + grow));
  test.prop([hostile(bodies, 600)], runs(150))(
    'any body, a near miss of a good one included: a status of the spec, never a throw, and a 200 only for a checkpoint the log signed',
    async (body) => {
      const { parts, state } = witnessOf(log);
      // The witness holds size 20 of the log, as a running one would.
      await addCheckpoint(parts, log.body(0, 20));
      const answer = await addCheckpoint(parts, body);
      expect(STATUSES).toContain(answer.status);
      if (answer.status !== 200) return;
      const held = state.held.get(ORIGIN);
      expect(held && Buffer.from(held.root).equals(Buffer.from(log.root(held.size)))).toBe(true);
    },
    TIMEOUT,
  );
});
