import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../../support/cli.js';
import { skipWithoutGoReference } from '../../support/go-reference.js';
import { startWitnessProcess, type WitnessProcess } from './support.js';

/**
 * `case-read witness serve` against a log written on Go's reference implementation
 * (test/support/go/witness-log, on golang.org/x/mod/sumdb/note and sumdb/tlog): its keys made
 * by note.GenerateKey, its checkpoints signed by note.Sign, its proofs made by tlog.ProveTree,
 * and each cosignature the witness returns opened by note.Open with a cosignature/v1 verifier
 * written from the spec, against the verifier key `witness keygen` printed. One line per step,
 * each the answer tlog-witness v1.0.0 asks for (decisions §19).
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-witness-go-'));
let witness: WitnessProcess | undefined;
afterAll(async () => {
  await witness?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const GO_ENV = { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '' };

function go(args: string[]): string {
  const result = spawnSync(args[0] as string, args.slice(1), {
    encoding: 'utf8',
    env: GO_ENV,
    timeout: 120_000,
  });
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** Each step of the Go log's walk and what the witness must answer it: status, then what Go made of it. */
const EXPECTED = [
  'first 200 verified',
  'grow 200 verified',
  'stale-old 409 size=9 type=text/x.tlog.size',
  'bad-proof 422 -',
  'same-size-other-root 422 -',
  'same-size-same-root 200 verified',
  'old-after-size 400 -',
  'wrong-key 403 -',
  'bad-signature 403 -',
  'unknown-origin 404 -',
  'grow-after-refusals 200 verified',
  'empty-tree-other-root 422 -',
  'proof-from-zero 422 -',
  'empty-tree 200 verified',
  'from-empty 200 verified',
  'malformed 400 -',
];

describe.skipIf(skipWithoutGoReference)(
  'witness serve, driven by a log on Go’s sumdb/note and sumdb/tlog',
  () => {
    it('gives every answer of tlog-witness v1.0.0, its cosignatures opened by Go’s note.Open', async () => {
      const bin = join(dir, 'witness-log');
      go(['go', 'build', '-o', bin, join(ROOT, 'test/support/go/witness-log/main.go')]);
      writeFileSync(join(dir, 'logs'), go([bin, 'keys', dir]));
      const keygen = runCli([
        'witness',
        'keygen',
        '--name',
        'witness.test.example/go',
        '--dir',
        join(dir, 'key'),
      ]);
      expect(keygen.status).toBe(0);
      const vkey = keygen.stdout.trimEnd().split('\n').at(-1) as string;
      witness = await startWitnessProcess({
        WITNESS_KEY: join(dir, 'key', 'witness-key'),
        WITNESS_LOGS: join(dir, 'logs'),
        WITNESS_STORE: `sqlite:${join(dir, 'witness.db')}`,
      });
      const steps = go([bin, 'walk', dir, witness.url, vkey]).trimEnd().split('\n');
      expect(steps).toEqual(EXPECTED);
    });
  },
);
