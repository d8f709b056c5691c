import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, runCli, type ServeSetup, startServe } from '../support/cli.js';
import { goBuild, skipWithoutGoReference } from '../support/go-reference.js';
import { httpsRequest } from '../support/https-client.js';
import { openSqlite } from '../support/sqlite.js';
import { type RunningWitness, startWitness, witnessKey } from '../support/witness.js';

/**
 * A trail across a restore (issue 67, ADR 30), as an operator lives it: two witnesses cosign a
 * SQLite trail under a both-of-two policy; a copy of the store is taken, more reads are
 * witnessed, the store is put back to the copy. `audit continue` names the loss and the trail
 * goes on as a new log: serve answers under it and both witnesses cosign it, `audit verify
 * --policy` passes naming the loss, and a subject access answer lists the reads from before the
 * copy and after the break, none of the lost ones, a gap covering them, its proof checked by
 * case-read and by Go under the new log. Then a second break after the first.
 */

const A = 'case-read.continue-test.example/audit';
const B = 'case-read.continue-test.example/audit-2';
const C = 'case-read.continue-test.example/audit-3';
const CRN = 'X123456';

let dir: string;
let setup: ServeSetup;
const LOGS = [A, B, C];
/** Each log's key pair (a new log has a key of its own): its private key file, its public one. */
const keyFile = (origin: string) => join(dir, `key-${LOGS.indexOf(origin)}`, 'audit-signing-key.pem');
const publicKey = (origin: string) => join(dir, `key-${LOGS.indexOf(origin)}`, 'audit-signing-key.pub.pem');
/**
 * What an instance of the log `origin` is configured with: its key and its origin, nothing of
 * the logs before (their keys are learned from the continuation statements).
 */
const env = (origin: string): Record<string, string> => ({
  ...setup.env,
  AUDIT_SIGNING_KEY: keyFile(origin),
  AUDIT_ORIGIN: origin,
  AUDIT_CHECKPOINT_RECORDS: '5',
  AUDIT_CHECKPOINT_SECONDS: '1',
  AUDIT_WITNESS_TIMEOUT_MS: '5000',
  SHUTDOWN_DELAY_MS: '0',
});
const vkeys = new Map<string, string>();
let w1: RunningWitness;
let w2: RunningWitness;

const store = () => join(dir, 'audit.db');
const copy = () => join(dir, 'audit-copy.db');
const takeCopy = () => {
  for (const suffix of ['', '-wal', '-shm']) {
    rmSync(copy() + suffix, { force: true });
    if (existsSync(store() + suffix)) copyFileSync(store() + suffix, copy() + suffix);
  }
};
const putBack = () => {
  for (const suffix of ['', '-wal', '-shm']) {
    rmSync(store() + suffix, { force: true });
    if (existsSync(copy() + suffix)) copyFileSync(copy() + suffix, store() + suffix);
  }
};

/** The records the store holds (its head), read beside any serve. */
function storeSize(): number {
  const db = openSqlite(store(), { readonly: true });
  try {
    return Number(db.prepare<[], { n: number }>('SELECT max(seq) AS n FROM audit').get()?.n ?? 0);
  } finally {
    db.close();
  }
}

/** The size witness `name` holds for the log `origin`, from its own state. */
function heldBy(name: string, origin: string): number {
  const db = openSqlite(join(dir, `witness-${name}`, 'witness.db'), { readonly: true });
  try {
    const row = db
      .prepare<[string], { size: number }>('SELECT size FROM witness_logs WHERE origin = ?')
      .get(origin);
    return Number(row?.size ?? 0);
  } finally {
    db.close();
  }
}

/** The both-of-two policy of the log `origin`. */
function policy(origin: string): string {
  const file = join(dir, `policy-${origin.split('/').at(-1)}`);
  writeFileSync(
    file,
    [
      `log ${vkeys.get(origin)}`,
      `witness w1 ${w1.vkey} ${w1.url}`,
      `witness w2 ${w2.vkey} ${w2.url}`,
      'group both 2 w1 w2',
      'quorum both',
      '',
    ].join('\n'),
  );
  return file;
}

/** Serve the log `origin` under its policy: `n` reads of the crn, each answered 200, then SIGTERM (the last checkpoint cosigned). */
async function serveReads(origin: string, n: number): Promise<void> {
  const server = await startServe({ ...env(origin), AUDIT_WITNESS_POLICY: policy(origin) });
  try {
    for (let i = 0; i < n; i++) {
      const res = await httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/${CRN}`, {
        ca: setup.ca,
        ...setup.client,
        headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
      });
      expect(res.status).toBe(200);
    }
  } finally {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await exited;
  }
}

/** `audit continue` to `origin` from the log before it, as JSON. */
function continueTo(origin: string, before: string, reason: string) {
  return runCli(
    [
      'audit',
      'continue',
      '--origin',
      origin,
      '--key',
      keyFile(origin),
      '--reason',
      reason,
      '--policy',
      policy(before),
      '--json',
    ],
    env(before),
  );
}

interface Answer {
  content: {
    disclosures: { index: number; operation: string }[];
    gaps: { from: string | null; to: string; recordsLost: number; reason: string }[];
  };
}

/** The subject access answer for the crn, from the store, under the log `origin`; saved to a file too. */
function subjectAccess(origin: string): { answer: Answer; file: string } {
  const run = runCli(['subject-access', '--crn', CRN], env(origin));
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const file = join(dir, `answer-${origin.split('/').at(-1)}.json`);
  writeFileSync(file, run.stdout);
  return { answer: JSON.parse(run.stdout) as Answer, file };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-continue-'));
  setup = prepareServe(dir);
  for (const origin of LOGS) {
    expect(runCli(['audit', 'keygen', '--dir', join(dir, `key-${LOGS.indexOf(origin)}`)]).status).toBe(0);
    const vkey = runCli(['audit', 'vkey'], env(origin)).stdout.trim();
    vkeys.set(origin, vkey);
    writeFileSync(join(dir, `${origin.split('/').at(-1)}.vkey`), `${vkey}\n`);
  }
  // Each witness knows the three logs (its operator is told of a new one: docs/operations/witness.md).
  const logs = [A, B, C].map((o) => vkeys.get(o) as string);
  w1 = await startWitness(
    join(dir, 'witness-w1'),
    witnessKey(join(dir, 'witness-w1'), 'witness.test.example/w1'),
    logs,
  );
  w2 = await startWitness(
    join(dir, 'witness-w2'),
    witnessKey(join(dir, 'witness-w2'), 'witness.test.example/w2'),
    logs,
  );
}, 120_000);
afterAll(async () => {
  await w1?.stop();
  await w2?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('audit continue, across one break and a second', () => {
  let kept = 0;
  let held = 0;

  it('refuses while the witnesses hold nothing more than the store, and a bad reason or origin', async () => {
    await serveReads(A, 6);
    const nothing = continueTo(B, A, 'nothing was lost');
    expect(nothing.status).toBe(1);
    expect(nothing.stderr).toMatch(/hold nothing more than this store's trail/);
    expect(continueTo(B, A, '').status).toBe(2);
    expect(continueTo(A, A, 'the same log').stderr).toMatch(/is the trail's origin now/);
    const sameKey = runCli(
      ['audit', 'continue', '--origin', B, '--key', keyFile(A), '--reason', 'r', '--policy', policy(A)],
      env(A),
    );
    expect(sameKey.stderr).toMatch(/a new log has a key of its own/);
    expect(runCli(['audit', 'verify', '--policy', policy(A)], env(A)).status).toBe(0);
  }, 120_000);

  it('after a restore: exit 0 naming the loss; the witnesses do not move', async () => {
    takeCopy();
    await serveReads(A, 10);
    held = storeSize();
    expect(heldBy('w1', A)).toBe(held);
    expect(heldBy('w2', A)).toBe(held);
    putBack();
    kept = storeSize();
    expect(kept).toBeLessThan(held);
    const continued = continueTo(B, A, 'restored from the copy (test)');
    expect(continued.stderr).toBe('');
    expect(continued.status).toBe(0);
    expect(JSON.parse(continued.stdout)).toMatchObject({
      origin: B,
      previous: A,
      kept,
      held,
      lost: held - kept,
      witnesses: [
        { name: 'w1', holds: held },
        { name: 'w2', holds: held },
      ],
    });
    expect([heldBy('w1', A), heldBy('w2', A)]).toEqual([held, held]);
    // Done once, refused the second time: the trail is B's now, and AUDIT_ORIGIN names A.
    expect(continueTo(B, A, 'again').stderr).toMatch(
      /newest checkpoint names case-read\.continue-test\.example\/audit-2/,
    );
    // serve of the log before is refused, naming both origins.
    const said = await startServe({ ...env(A), AUDIT_WITNESS_POLICY: policy(A) }).then(
      async (server) => {
        server.child.kill('SIGKILL');
        return 'serve started';
      },
      (error: unknown) => (error as Error).message,
    );
    expect(said).toMatch(/serve exited with \d+:[\s\S]*audit-2/);
  }, 120_000);

  it('serve on the new log answers, both witnesses cosign it, verify --policy passes naming the loss', async () => {
    await serveReads(B, 6);
    const size = storeSize();
    expect([heldBy('w1', B), heldBy('w2', B)]).toEqual([size, size]);
    const verified = runCli(['audit', 'verify', '--policy', policy(B)], env(B));
    expect(verified.stderr).toBe('');
    expect(verified.status).toBe(0);
    expect(verified.stdout).toContain(
      `continued at record ${kept + 1}: ${A} kept ${kept} records, its witnesses held ${held}: ${held - kept} records lost`,
    );
    expect(verified.stdout).toMatch(/witnessed: the newest checkpoint/);
    // With the public key, every checkpoint: those of A up to the break, B's after.
    const keyed = runCli(
      ['audit', 'verify', '--public-key', publicKey(A), '--public-key', publicKey(B), '--origin', B],
      env(B),
    );
    expect(keyed.stdout + keyed.stderr).toMatch(/audit chain intact/);
    expect(keyed.status).toBe(0);
  }, 120_000);

  it('a subject access answer: reads before the copy and after the break, a gap for the lost ones, proved under the new log', () => {
    const { answer, file } = subjectAccess(B);
    const indexes = answer.content.disclosures.map((d) => d.index);
    // 6 reads before the copy (records 1..6), the 10 lost, 6 after the continuation record.
    expect(indexes).toHaveLength(12);
    expect(indexes.filter((i) => i < kept)).toHaveLength(6);
    expect(indexes.filter((i) => i > kept)).toHaveLength(6);
    expect(answer.content.gaps).toEqual([
      {
        from: expect.any(String),
        to: expect.any(String),
        recordsLost: held - kept,
        reason: 'restored from the copy (test)',
      },
    ]);
    const [gap] = answer.content.gaps;
    expect(Date.parse(gap?.from ?? '')).toBeLessThanOrEqual(Date.parse(gap?.to ?? ''));
    const vkeyB = join(dir, 'audit-2.vkey');
    expect(runCli(['subject-access', 'verify', file, '--vkey', vkeyB], env(B)).status).toBe(0);
    if (!skipWithoutGoReference) {
      const go = goBuild('examples/subject-access-verify/main.go', join(dir, 'subject-access-verify'));
      const checked = spawnSync(go, [file, vkeyB], { encoding: 'utf8', timeout: 60_000 });
      expect(checked.stderr).toBe('');
      expect(checked.status).toBe(0);
      // Under the log before, it does not verify: the answer is the new log's.
      expect(spawnSync(go, [file, join(dir, 'audit.vkey')], { encoding: 'utf8' }).status).not.toBe(0);
    }
  }, 120_000);

  it('a second break after the first: continued again, verified with both losses, two gaps', async () => {
    takeCopy();
    await serveReads(B, 5);
    const heldB = storeSize();
    putBack();
    const keptB = storeSize();
    const continued = continueTo(C, B, 'a standby promoted behind (test)');
    expect(continued.stderr).toBe('');
    expect(JSON.parse(continued.stdout)).toMatchObject({ previous: B, kept: keptB, held: heldB });
    await serveReads(C, 3);
    const verified = runCli(['audit', 'verify', '--policy', policy(C)], env(C));
    expect(verified.status).toBe(0);
    expect(verified.stdout).toContain(`${A} kept ${kept} records`);
    expect(verified.stdout).toContain(`${B} kept ${keptB} records, its witnesses held ${heldB}`);
    const keys = LOGS.flatMap((origin) => ['--public-key', publicKey(origin)]);
    expect(runCli(['audit', 'verify', ...keys, '--origin', C], env(C)).status).toBe(0);
    const { answer } = subjectAccess(C);
    expect(answer.content.gaps.map((g) => g.recordsLost)).toEqual([held - kept, heldB - keptB]);
    expect(answer.content.disclosures).toHaveLength(6 + 6 + 3);
  }, 180_000);

  it('a statement changed in the store is refused by verify', () => {
    const db = openSqlite(store());
    try {
      db.prepare(
        "UPDATE audit SET continuation = replace(continuation, 'held ', 'held 1') WHERE seq = ?",
      ).run(kept + 1);
    } finally {
      db.close();
    }
    const verified = runCli(['audit', 'verify', '--policy', policy(C)], env(C));
    expect(verified.status).toBe(1);
    expect(verified.stdout + verified.stderr).toMatch(/BROKEN|REFUSED/);
  });
});
