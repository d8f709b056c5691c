import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, runCli, type ServeSetup, startServe } from '../support/cli.js';
import { httpsRequest } from '../support/https-client.js';
import { POSTGRES_URL, testSchema } from '../support/postgres.js';
import { type RunningWitness, startWitness, witnessKey } from '../support/witness.js';

/**
 * Several `serve` instances on one PostgreSQL trail with one witness (decisions §19, issue 54
 * item 2): the size the witness holds is kept in the store, so the instances, and an instance
 * started afterwards, carry on from it: no storm of 409s, and a restart does not begin again
 * from size 0. Then the schema restored from a pg_dump taken earlier, as an operator restores
 * one (issue 67): serve refuses to start on it, naming both sizes and the witness; `audit
 * continue` goes on as a new log, served, witnessed, verified and told in subject access.
 */

const ORIGIN = 'case-read.witness-pg.example/audit';
const NEW = 'case-read.witness-pg.example/audit-2';
const schema = testSchema('witnesses');
let dir: string;
let setup: ServeSetup;
let env: Record<string, string>;
let witness: RunningWitness;
let witnessVkey: string;
let newVkey: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-witnesses-pg-'));
  setup = prepareServe(dir, { stores: { AUDIT_STORE: schema.url } });
  expect(runCli(['audit', 'keygen', '--dir', join(dir, 'audit-key')]).status).toBe(0);
  const base = {
    ...setup.env,
    AUDIT_SIGNING_KEY: join(dir, 'audit-key', 'audit-signing-key.pem'),
    AUDIT_ORIGIN: ORIGIN,
    AUDIT_CHECKPOINT_RECORDS: '5',
    AUDIT_CHECKPOINT_SECONDS: '1',
  };
  const logVkey = runCli(['audit', 'vkey'], base).stdout.trim();
  // The log it may go on as, with a key of its own.
  expect(runCli(['audit', 'keygen', '--dir', join(dir, 'audit-key-2')]).status).toBe(0);
  newVkey = runCli(['audit', 'vkey'], {
    ...base,
    AUDIT_SIGNING_KEY: join(dir, 'audit-key-2', 'audit-signing-key.pem'),
    AUDIT_ORIGIN: NEW,
  }).stdout.trim();
  const key = witnessKey(join(dir, 'w1'), 'witness.test.example/w1');
  witnessVkey = key.vkey;
  // The witness knows the log and the one it may go on as (docs/operations/witness.md).
  witness = await startWitness(join(dir, 'w1'), key, [logVkey, newVkey]);
  const policy = join(dir, 'policy');
  writeFileSync(policy, `log ${logVkey}\nwitness w1 ${key.vkey} ${witness.url}\nquorum w1\n`);
  env = { ...base, AUDIT_WITNESS_POLICY: policy };
}, 120_000);
afterAll(async () => {
  await witness?.stop();
  await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

type Server = Awaited<ReturnType<typeof startServe>>;

const read = (server: Server) =>
  httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
    ca: setup.ca,
    ...setup.client,
    headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
  });

async function stop(server: Server): Promise<Record<string, unknown>[]> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const answers = (lines: readonly Record<string, unknown>[], msg: string) =>
  lines.filter((l) => l.msg === msg && l.witness === 'w1');

describe('witnesses with several instances on one PostgreSQL trail', () => {
  it('two instances share what the witness holds; a third, started after, carries on from it', async () => {
    const a = await startServe(env);
    const b = await startServe(env);
    let linesA: Record<string, unknown>[] = [];
    let linesB: Record<string, unknown>[] = [];
    try {
      for (let i = 0; i < 30; i++) {
        expect((await read(a)).status).toBe(200);
        expect((await read(b)).status).toBe(200);
      }
    } finally {
      linesA = await stop(a);
      linesB = await stop(b);
    }
    const lines = [...linesA, ...linesB];
    const cosigned = answers(lines, 'audit checkpoint cosigned');
    const conflicts = answers(lines, 'audit witness holds another size');
    expect(
      answers(
        lines,
        'audit witness refused the checkpoint: this trail may have been rolled back or forked; see the runbook',
      ),
    ).toEqual([]);
    expect(cosigned.length).toBeGreaterThan(0);
    // Each 409 comes of two instances sending at once, and is followed once: never more of them than cosignatures.
    expect(conflicts.length).toBeLessThanOrEqual(cosigned.length);
    expect(runCli(['audit', 'verify', '--policy', env.AUDIT_WITNESS_POLICY as string], env).status).toBe(0);

    // A third instance, on the same trail: its first submission proves from the size the store keeps.
    const heldBefore = Math.max(...cosigned.map((l) => Number(l.size)));
    const c = await startServe(env);
    for (let i = 0; i < 10; i++) expect((await read(c)).status).toBe(200);
    const linesC = await stop(c);
    const first = answers(linesC, 'audit checkpoint cosigned')[0];
    expect(first?.from).toBeGreaterThanOrEqual(heldBefore);
    expect(answers(linesC, 'audit witness holds another size')).toEqual([]);
    expect(runCli(['audit', 'verify', '--policy', env.AUDIT_WITNESS_POLICY as string], env).status).toBe(0);
  }, 180_000);
});

describe('the audit schema restored from an earlier pg_dump', () => {
  let storeSize = 0;
  let held = 0;

  it("serve refuses to start, naming the store's size and what the witness holds", async () => {
    const dump = join(dir, 'audit-schema.dump');
    // The backup: the schema as it is now (every checkpoint witnessed), in pg_dump's own format.
    execFileSync('pg_dump', [
      '--dbname',
      POSTGRES_URL,
      '--schema',
      schema.name,
      '--format',
      'custom',
      '--file',
      dump,
    ]);
    const a = await startServe(env);
    try {
      for (let i = 0; i < 20; i++) expect((await read(a)).status).toBe(200);
    } finally {
      await stop(a);
    }
    // The restore: the schema dropped and brought back from the backup.
    await schema.drop();
    execFileSync('pg_restore', ['--dbname', POSTGRES_URL, dump]);
    const said = await startServe(env).then(
      async (server) => {
        await stop(server);
        return 'serve started';
      },
      (error: unknown) => (error as Error).message,
    );
    expect(said).toMatch(/^serve exited with 1:/);
    storeSize = Number(/trail has (\d+) records/.exec(said)?.[1]);
    held = Number(/w1 holds (\d+) records/.exec(said)?.[1]);
    expect(storeSize).toBeGreaterThan(0);
    expect(held).toBeGreaterThan(storeSize);
    expect(said).toContain('runbook.md#casereadauditstorebehindwitnesses');
  }, 120_000);

  it('audit continue goes on as a new log: served, witnessed, verified naming the loss, a gap in subject access', async () => {
    expect(held).toBeGreaterThan(storeSize);
    const continued = runCli(
      [
        'audit',
        'continue',
        '--origin',
        NEW,
        '--key',
        join(dir, 'audit-key-2', 'audit-signing-key.pem'),
        '--reason',
        'pg_restore of the morning dump (test)',
        '--json',
      ],
      env,
    );
    expect(continued.stderr).toBe('');
    expect(continued.status).toBe(0);
    expect(JSON.parse(continued.stdout)).toMatchObject({
      previous: ORIGIN,
      kept: storeSize,
      held,
      lost: held - storeSize,
    });
    const policy = join(dir, 'policy-new');
    writeFileSync(policy, `log ${newVkey}\nwitness w1 ${witnessVkey} ${witness.url}\nquorum w1\n`);
    const envNew = {
      ...env,
      AUDIT_ORIGIN: NEW,
      AUDIT_SIGNING_KEY: join(dir, 'audit-key-2', 'audit-signing-key.pem'),
      AUDIT_WITNESS_POLICY: policy,
    };
    const server = await startServe(envNew);
    let lines: Record<string, unknown>[] = [];
    try {
      for (let i = 0; i < 7; i++) expect((await read(server)).status).toBe(200);
    } finally {
      lines = await stop(server);
    }
    expect(answers(lines, 'audit checkpoint cosigned').length).toBeGreaterThan(0);
    const verified = runCli(['audit', 'verify', '--policy', policy], envNew);
    expect(verified.stderr).toBe('');
    expect(verified.status).toBe(0);
    expect(verified.stdout).toContain(`${ORIGIN} kept ${storeSize} records, its witnesses held ${held}`);
    const sar = runCli(['subject-access', '--crn', 'X123456'], envNew);
    expect(sar.status).toBe(0);
    const content = (
      JSON.parse(sar.stdout) as {
        content: { gaps: { recordsLost: number }[]; disclosures: { index: number }[] };
      }
    ).content;
    expect(content.gaps.map((g) => g.recordsLost)).toEqual([held - storeSize]);
    expect(content.disclosures.filter((d) => d.index > storeSize)).toHaveLength(7);
    const answer = join(dir, 'answer.json');
    writeFileSync(answer, sar.stdout);
    expect(runCli(['subject-access', 'verify', answer, '--vkey', newVkey], envNew).status).toBe(0);
  }, 180_000);
});
