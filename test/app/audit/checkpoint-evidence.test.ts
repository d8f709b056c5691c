import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkpointKeyring,
  checkpointSigner,
  generateCheckpointKeys,
} from '../../../src/adapters/crypto/checkpoint-keys.js';
import { CheckpointEvidenceError, gatherCheckpoints } from '../../../src/app/audit/checkpoint-evidence.js';
import { type AuditCheckpoint, signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import type { AuditCheckpointStore } from '../../../src/ports/audit-log.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-evidence-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const keys = await generateCheckpointKeys();
const signer = await checkpointSigner(keys.privatePem, 'test.invalid/log');
const keyring = await checkpointKeyring([{ path: 'pub.pem', pem: keys.publicPem }]);
const signed = (seq: number): AuditCheckpoint =>
  signCheckpoint(
    { seq, hash: String(seq).repeat(64).slice(0, 64) },
    new Date('2026-11-23T10:00:00.000Z'),
    signer,
  );
const storeOf = (stored: (AuditCheckpoint | { invalid: string })[]): AuditCheckpointStore => ({
  head: async () => ({ seq: 0, hash: '' }),
  saveCheckpoint: async () => {},
  newestCheckpoint: async () => undefined,
  async *checkpoints() {
    yield* stored;
  },
  addCosignatures: async () => {},
  witnessSizes: async () => new Map(),
  saveWitnessSize: async () => {},
});
const file = (name: string, lines: string[]) => {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
  return path;
};

describe('gatherCheckpoints', () => {
  it('reads the service log (other lines skipped) and an export, each checkpoint once', async () => {
    const log = file('service.log', [
      '{"level":30,"msg":"listening","url":"https://127.0.0.1:8443"}',
      'not json at all',
      JSON.stringify({ level: 30, time: 1, msg: 'audit checkpoint', checkpoint: signed(5) }),
      '{"level":30,"msg":"request","status":200}',
      JSON.stringify({ level: 30, time: 2, msg: 'audit checkpoint', checkpoint: signed(9) }),
    ]);
    const exported = file('export.jsonl', [JSON.stringify(signed(5)), JSON.stringify(signed(12))]);
    const evidence = await gatherCheckpoints(storeOf([signed(5)]), [log, exported], keyring);
    expect(evidence.stored).toBe(1);
    expect(evidence.onlyInFiles).toBe(2);
    expect(evidence.checkpoints.size).toBe(3);
    expect(evidence.checkpoints.newest?.seq).toBe(12);
  });

  it.each<[string, () => Promise<unknown>, RegExp]>([
    [
      'a stored checkpoint changed after signing',
      () => gatherCheckpoints(storeOf([{ ...signed(5), seq: 6 }]), [], keyring),
      /checkpoint at seq 6 .* in the store has a signature that does not verify/,
    ],
    [
      'a stored row that is no checkpoint',
      () =>
        gatherCheckpoints(
          storeOf([{ invalid: 'stored checkpoint at seq 3: head is not a SHA-256 hash' }]),
          [],
          keyring,
        ),
      /stored checkpoint at seq 3: head is not/,
    ],
    [
      'a checkpoint line that cannot be read',
      () =>
        gatherCheckpoints(
          storeOf([]),
          [
            file('bad.log', [
              JSON.stringify({ msg: 'audit checkpoint', checkpoint: { ...signed(2), head: 'x' } }),
            ]),
          ],
          keyring,
        ),
      /bad.log line 1: a checkpoint that cannot be read \(head/,
    ],
    [
      'a forged line in a file',
      () =>
        gatherCheckpoints(
          storeOf([]),
          [file('forged.log', ['', JSON.stringify({ ...signed(2), head: 'f'.repeat(64) })])],
          keyring,
        ),
      /forged.log line 2 has a signature that does not verify/,
    ],
    [
      'a file that cannot be read',
      () => gatherCheckpoints(storeOf([]), [join(dir, 'absent')], keyring),
      /absent cannot be read \(ENOENT\)/,
    ],
  ])('refuses %s, naming it', async (_label, run, message) => {
    const error = await run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointEvidenceError);
    expect((error as Error).message).toMatch(message);
  });
});

describe('gatherCheckpoints of a continued trail (ADR 30)', () => {
  it('refuses a checkpoint naming another log than the trail had at its size', async () => {
    const before = await checkpointSigner(keys.privatePem, 'test.invalid/log');
    const noted = (seq: number, by: typeof before) =>
      signCheckpoint(
        { seq, hash: String(seq).repeat(64).slice(0, 64) },
        new Date('2026-11-23T10:00:00.000Z'),
        by,
        new Uint8Array(32).fill(seq),
      );
    const noteKeys = [
      { ...before.note, verify: () => true },
      { ...(await checkpointSigner(keys.privatePem, 'test.invalid/log-2')).note, verify: () => true },
    ];
    // The trail was test.invalid/log up to 3 records, test.invalid/log-2 from 4 on.
    const originAt = (size: number) => (size <= 3 ? 'test.invalid/log' : 'test.invalid/log-2');
    const after = await checkpointSigner(keys.privatePem, 'test.invalid/log-2');
    const fine = await gatherCheckpoints(
      storeOf([noted(2, before), noted(5, after)]),
      [],
      keyring,
      noteKeys,
      originAt,
    );
    expect(fine.checkpoints.size).toBe(2);
    await expect(
      gatherCheckpoints(storeOf([noted(2, before), noted(5, before)]), [], keyring, noteKeys, originAt),
    ).rejects.toThrow(
      /names the log test\.invalid\/log, but the trail was test\.invalid\/log-2 at 5 records/,
    );
  });
});
