import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cosignerFromSkey,
  newCosignerKey,
  writeCosignerKeyFile,
} from '../../../src/adapters/crypto/cosigner-keys.js';
import { verifyNoteSignature } from '../../../src/adapters/crypto/note-keys.js';
import { openPostgresWitnessState } from '../../../src/adapters/postgres/witness-state.js';
import { sha256Bytes } from '../../../src/adapters/shared/sha256.js';
import { addCheckpoint, type WitnessParts } from '../../../src/app/witness/add-checkpoint.js';
import type { WitnessState } from '../../../src/ports/witness-state.js';
import { parseVerifierKey } from '../../../src/tlog/note.js';
import { testSchema } from '../../support/postgres.js';
import {
  type Answer,
  readingTogether,
  startWitnessProcess,
  submit,
  TestLog,
  type WitnessProcess,
} from './support.js';

/**
 * Two `case-read witness serve` processes on one PostgreSQL store (decisions §19): the check
 * and the write are one conditional statement, so of sixteen submissions from one size, spread
 * over both, exactly one is cosigned and the rest are told the size it wrote.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-witness-pg-'));
const schema = testSchema('witness');
const log = new TestLog('log-pg.test.example/log');
const key = newCosignerKey('witness.example.org/pg');
let witnesses: WitnessProcess[] = [];

beforeAll(async () => {
  writeCosignerKeyFile(join(dir, 'witness-key'), key.skey);
  writeFileSync(join(dir, 'logs'), `log ${log.vkey}\n`);
  const env = {
    WITNESS_KEY: join(dir, 'witness-key'),
    WITNESS_LOGS: join(dir, 'logs'),
    WITNESS_STORE: schema.url,
  };
  // One after the other: the first creates the table, the second finds it.
  witnesses = [await startWitnessProcess(env)];
  witnesses.push(await startWitnessProcess(env));
});
afterAll(async () => {
  for (const witness of witnesses) await witness.stop();
  await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Sixteen submissions at once, from `old` to old+1 … old+16, sent to the two witnesses in turn. */
const race = (old: number): Promise<Answer[]> =>
  Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      submit((witnesses[i % 2] as WitnessProcess).url, log.body(old, old + i + 1)),
    ),
  );

const heldSize = async (): Promise<number> =>
  Number((await schema.query('SELECT size FROM witness_logs WHERE origin = $1', [log.origin])).rows[0]?.size);

describe('witness serve: two instances on one PostgreSQL store', () => {
  it('sixteen submissions racing from one old size: exactly one 200, fifteen 409 naming the size it wrote', async () => {
    const first = await race(0);
    expect(first.filter((a) => a.status === 200)).toHaveLength(1);
    const won = first.findIndex((a) => a.status === 200) + 1;
    expect(first.filter((a) => a.status === 409)).toHaveLength(15);
    expect(await heldSize()).toBe(won);
    const next = await race(won);
    expect(next.filter((a) => a.status === 200)).toHaveLength(1);
    expect(next.filter((a) => a.status === 409)).toHaveLength(15);
    const now = won + next.findIndex((a) => a.status === 200) + 1;
    expect(await heldSize()).toBe(now);
    // Each instance answers from the one record.
    for (const witness of witnesses)
      expect(await submit(witness.url, log.body(0, now + 1))).toMatchObject({
        status: 409,
        body: `${now}\n`,
      });
  });

  it('sixteen submissions that all read the same record, over two pools: the conditional statement lets one through', async () => {
    const states: WitnessState[] = [
      await openPostgresWitnessState(schema.url),
      await openPostgresWitnessState(schema.url),
    ];
    try {
      const logKey = parseVerifierKey(sha256Bytes, log.vkey);
      if ('invalid' in logKey) throw new Error(logKey.invalid);
      const verifier = {
        ...logKey,
        verify: (m: Uint8Array, s: Uint8Array) => verifyNoteSignature(logKey, m, s),
      };
      const together = readingTogether(16);
      const parts = (state: WitnessState): WitnessParts => ({
        sha256: sha256Bytes,
        logs: new Map([[log.origin, [verifier]]]),
        state: together(state),
        cosigner: cosignerFromSkey(key.skey),
        now: () => Math.floor(Date.now() / 1000),
      });
      const [a, b] = states.map(parts) as [WitnessParts, WitnessParts];
      const old = await heldSize();
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => addCheckpoint(i % 2 === 0 ? a : b, log.body(old, old + i + 1))),
      );
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
      expect(answers.filter((answer) => answer.status === 409)).toHaveLength(15);
    } finally {
      for (const state of states) await state.close();
    }
  });
});
