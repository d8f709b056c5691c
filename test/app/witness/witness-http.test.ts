import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newCosignerKey, writeCosignerKeyFile } from '../../../src/adapters/crypto/cosigner-keys.js';
import { buildWitness, type Witness } from '../../../src/app/composition/witness.js';
import { addCheckpoint } from '../../../src/app/witness/add-checkpoint.js';
import { MAX_BODY_BYTES, type WitnessLog, witnessHandler } from '../../../src/app/witness/http.js';
import { type RunningWitness, startWitnessServer } from '../../../src/app/witness/server.js';
import { EMPTY_ROOT, isCosignature, readingTogether, submit, TestLog } from './support.js';

/**
 * `case-read witness serve`'s answers (C2SP tlog-witness v1.0.0, add-checkpoint), from its HTTP
 * server on a SQLite state, to a log written from the specs (support.ts): every answer the spec
 * lists, what survives a restart, and sixteen submissions racing from one size.
 */

const root = mkdtempSync(join(tmpdir(), 'case-read-witness-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dir: string;
let count = 0;
let logA: TestLog;
let logB: TestLog;
let witness: Witness;
let server: RunningWitness;
let lines: { level: string; fields: Record<string, unknown>; message: string }[];
let vkey: string;

/** The witness of `dir`'s files, on its SQLite state, behind its HTTP server. */
async function start(): Promise<void> {
  witness = await buildWitness({
    keyFile: join(dir, 'witness-key'),
    logsFile: join(dir, 'logs'),
    store: `sqlite:${join(dir, 'witness.db')}`,
    host: '127.0.0.1',
    port: 0,
    logLevel: 'silent',
  });
  const log: WitnessLog = (level, fields, message) => lines.push({ level, fields, message });
  server = await startWitnessServer(witnessHandler(witness.parts, witness.metrics, log), {
    host: '127.0.0.1',
    port: 0,
  });
}

async function stop(): Promise<void> {
  await server.close(1000);
  await witness.close();
}

beforeEach(async () => {
  dir = join(root, String(++count));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  const key = newCosignerKey('witness.test.example/w1');
  writeCosignerKeyFile(join(dir, 'witness-key'), key.skey);
  vkey = key.vkey;
  logA = new TestLog('log-a.test.example/log');
  logB = new TestLog('log-b.test.example/log', 'b');
  writeFileSync(
    join(dir, 'logs'),
    `# the logs this witness cosigns\nlog ${logA.vkey}\nlog ${logB.vkey} https://log-b.test.example/\n`,
  );
  lines = [];
  await start();
});
afterEach(stop);

const post = (body: string | Uint8Array) => submit(server.url, body);

describe('witness serve: add-checkpoint answers as tlog-witness v1.0.0 says', () => {
  it('200 with its cosignature/v1 line (text/plain) for a first checkpoint from old 0, then for a growth with its proof', async () => {
    const first = await post(logA.body(0, 5));
    expect(first).toMatchObject({ status: 200, type: 'text/plain; charset=utf-8' });
    expect(first.body.split('\n')).toHaveLength(2);
    expect(isCosignature(first.body, vkey, logA.text(5))).toBe(true);
    // Not a cosignature of another checkpoint, nor by another key.
    expect(isCosignature(first.body, vkey, logA.text(6))).toBe(false);
    expect(isCosignature(first.body, newCosignerKey('witness.test.example/w1').vkey, logA.text(5))).toBe(
      false,
    );
    const grown = await post(logA.body(5, 9));
    expect(grown.status).toBe(200);
    expect(isCosignature(grown.body, vkey, logA.text(9))).toBe(true);
  });

  it('409 with Content-Type text/x.tlog.size and "N\\n" when old is not the size held (0 when none)', async () => {
    expect((await post(logA.body(3, 5))).status).toBe(409);
    expect(await post(logA.body(3, 5))).toEqual({ status: 409, type: 'text/x.tlog.size', body: '0\n' });
    expect((await post(logA.body(0, 5))).status).toBe(200);
    expect(await post(logA.body(0, 7))).toEqual({ status: 409, type: 'text/x.tlog.size', body: '5\n' });
    expect(await post(logA.body(4, 7))).toEqual({ status: 409, type: 'text/x.tlog.size', body: '5\n' });
    expect((await post(logA.body(5, 7))).status).toBe(200);
  });

  it('422 for a proof that fails, and nothing moves', async () => {
    expect((await post(logA.body(0, 5))).status).toBe(200);
    const proof = logA.proof(5, 9);
    const broken = proof.map((hash, i) => (i === 0 ? hash.map((b, j) => (j === 0 ? b ^ 1 : b)) : hash));
    expect((await post(logA.body(5, 9, { proof: broken }))).status).toBe(422);
    expect((await post(logA.body(5, 9, { proof: proof.slice(1) }))).status).toBe(422);
    expect((await post(logA.body(5, 9, { proof: [] }))).status).toBe(422);
    // A proof of another log's tree to the same sizes.
    expect((await post(logA.body(5, 9, { proof: logB.proof(5, 9) }))).status).toBe(422);
    expect(await post(logA.body(0, 9))).toMatchObject({ status: 409, body: '5\n' });
    expect((await post(logA.body(5, 9))).status).toBe(200);
  });

  it('422 for a proof given from old 0', async () => {
    const answer = await post(logA.body(0, 9, { proof: logA.proof(4, 9) }));
    expect(answer.status).toBe(422);
    expect(answer.body).toMatch(/no proof is needed from size 0/);
  });

  it('422 for the size held with another root (a fork); 200 for the same root again', async () => {
    expect((await post(logA.body(0, 9))).status).toBe(200);
    const fork = new TestLog(logA.origin, 'fork');
    const forked = logA.checkpoint(9, fork.root(9));
    expect((await post(logA.body(9, 9, { proof: [], note: forked }))).status).toBe(422);
    const again = await post(logA.body(9, 9));
    expect(again.status).toBe(200);
    expect(isCosignature(again.body, vkey, logA.text(9))).toBe(true);
  });

  it("422 for a size-0 checkpoint whose root is not the empty tree's; 200 for the empty tree's", async () => {
    const wrong = await post(logA.body(0, 0, { note: logA.checkpoint(0, logA.root(1)) }));
    expect(wrong.status).toBe(422);
    expect(wrong.body).toMatch(/empty tree/);
    const empty = await post(logA.body(0, 0, { note: logA.checkpoint(0, EMPTY_ROOT) }));
    expect(empty.status).toBe(200);
    expect(isCosignature(empty.body, vkey, logA.text(0, EMPTY_ROOT))).toBe(true);
    expect((await post(logA.body(0, 4))).status).toBe(200);
  });

  it('400 for old after the checkpoint size', async () => {
    const answer = await post(logA.body(6, 5, { proof: [] }));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatch(/old 6 is after the checkpoint's size 5/);
  });

  const note = () => logA.checkpoint(5);
  const hash = Buffer.alloc(32, 7).toString('base64');
  it.each<[string, () => string | Uint8Array]>([
    ['no old line', () => `\n${note()}`],
    ['old with a leading zero', () => `old 05\n\n${note()}`],
    ['old not a number', () => `old five\n\n${note()}`],
    ['a proof line that is not a hash', () => `old 0\nnot-a-hash\n\n${note()}`],
    ['64 proof lines', () => `old 1\n${`${hash}\n`.repeat(64)}\n${note()}`],
    ['no empty line', () => `old 0\n${note().replace('\n\n', '\n')}`],
    ['no checkpoint', () => 'old 0\n\n'],
    ['a note that is not a checkpoint', () => `old 0\n\n${logA.sign(`${logA.origin}\nfive\n`)}`],
    ['a note whose signature line is malformed', () => `old 0\n\n${logA.text(5)}\n— ${logA.origin}\n`],
    [
      'bytes that are not UTF-8',
      () => new Uint8Array([...Buffer.from(`old 0\n\n${logA.origin}\n`), 0xff, 0x0a]),
    ],
  ])('400 for a malformed body: %s', async (_, body) => {
    expect((await post(body())).status).toBe(400);
  });

  it('403 when no key it trusts for the origin signed it, or a trusted key’s signature fails', async () => {
    const impostor = new TestLog(logA.origin);
    const unsigned = await post(logA.body(0, 5, { note: impostor.checkpoint(5) }));
    expect(unsigned.status).toBe(403);
    expect(unsigned.body).toMatch(/no signature on the checkpoint is by a key this witness trusts/);
    const [text, signatures] = logA.checkpoint(5).split('\n\n') as [string, string];
    const changed = `${text.replace('\n5\n', '\n6\n')}\n\n${signatures}`;
    expect((await post(logA.body(0, 5, { note: changed }))).status).toBe(403);
    // A trusted signature beside an unknown one: the unknown one is ignored.
    const both = `${logA.checkpoint(5)}${impostor.checkpoint(5).split('\n\n')[1]}`;
    expect((await post(logA.body(0, 5, { note: both }))).status).toBe(200);
  });

  it('404 for a log it does not cosign', async () => {
    const other = new TestLog('other.test.example/log');
    const answer = await post(other.body(0, 3));
    expect(answer.status).toBe(404);
  });

  it(`413 for a body over ${MAX_BODY_BYTES} bytes`, async () => {
    const answer = await post(`old 0\n${'A'.repeat(MAX_BODY_BYTES)}\n\n${logA.checkpoint(1)}`);
    expect(answer.status).toBe(413);
  });

  it('keeps the log’s signature and its own cosignature in the note it records', async () => {
    expect((await post(logA.body(0, 5))).status).toBe(200);
    const held = await witness.parts.state.latest(logA.origin);
    expect(held?.size).toBe(5);
    const [text, signatures = ''] = (held?.note ?? '').split('\n\n');
    expect(`${text}\n`).toBe(logA.text(5));
    const [logLine, cosignature, ...more] = signatures.split('\n');
    expect(logLine).toBe(logA.checkpoint(5).split('\n\n')[1]?.trimEnd());
    expect(isCosignature(`${cosignature}\n`, vkey, logA.text(5))).toBe(true);
    expect(more).toEqual(['']);
  });

  it('logs a 422 as an error with the checkpoint refused, and counts every answer by status', async () => {
    await post(logA.body(0, 5));
    await post(logA.body(0, 9));
    const fork = new TestLog(logA.origin, 'fork');
    await post(logA.body(5, 5, { proof: [], note: logA.checkpoint(5, fork.root(5)) }));
    const refused = lines.find((line) => line.fields.status === 422);
    expect(refused).toMatchObject({ level: 'error', fields: { origin: logA.origin } });
    expect(String(refused?.fields.checkpoint)).toContain(logA.text(5, fork.root(5)));
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('case_read_witness_add_checkpoint_total{status="200"} 1');
    expect(metrics).toContain('case_read_witness_add_checkpoint_total{status="409"} 1');
    expect(metrics).toContain('case_read_witness_add_checkpoint_total{status="422"} 1');
    expect(metrics).toContain(`case_read_witness_cosigned_size{origin="${logA.origin}"} 5`);
  });

  it('answers only POST /add-checkpoint, GET /health and GET /metrics', async () => {
    expect(await (await fetch(`${server.url}/health`)).text()).toBe('ok\n');
    expect((await fetch(`${server.url}/add-checkpoint`)).status).toBe(405);
    expect((await fetch(`${server.url}/metrics`, { method: 'POST', body: 'x' })).status).toBe(405);
    expect((await fetch(`${server.url}/logs`)).status).toBe(404);
    expect((await fetch(`${server.url}/add-checkpoint/extra`, { method: 'POST', body: 'x' })).status).toBe(
      404,
    );
  });
});

describe('witness serve: its state', () => {
  it('survives a restart (SQLite file): the size held, and only what extends it is cosigned', async () => {
    expect((await post(logA.body(0, 9))).status).toBe(200);
    expect((await post(logB.body(0, 2))).status).toBe(200);
    await stop();
    await start();
    expect(await post(logA.body(0, 12))).toMatchObject({ status: 409, body: '9\n' });
    expect(await post(logB.body(0, 3))).toMatchObject({ status: 409, body: '2\n' });
    const fork = new TestLog(logA.origin, 'fork');
    expect((await post(logA.body(9, 9, { proof: [], note: logA.checkpoint(9, fork.root(9)) }))).status).toBe(
      422,
    );
    expect((await post(logA.body(9, 12))).status).toBe(200);
  });

  it('sixteen submissions racing from one old size: exactly one 200, fifteen 409, from nothing held and from a size held', async () => {
    const first = await Promise.all(Array.from({ length: 16 }, (_, i) => post(logA.body(0, i + 1))));
    expect(first.filter((a) => a.status === 200)).toHaveLength(1);
    expect(first.filter((a) => a.status === 409)).toHaveLength(15);
    const won = first.findIndex((a) => a.status === 200) + 1;
    expect((await witness.parts.state.latest(logA.origin))?.size).toBe(won);
    const next = await Promise.all(Array.from({ length: 16 }, (_, i) => post(logA.body(won, won + i + 1))));
    expect(next.filter((a) => a.status === 200)).toHaveLength(1);
    expect(next.filter((a) => a.status === 409).map((a) => a.body)).toHaveLength(15);
    expect((await witness.parts.state.latest(logA.origin))?.size).toBe(
      won + next.findIndex((a) => a.status === 200) + 1,
    );
  });
});

describe('witness: the check and the write are one step', () => {
  it('sixteen submissions that all read the same record: the SQLite state lets one through, the rest are told the size it wrote', async () => {
    const parts = { ...witness.parts, state: readingTogether(16)(witness.parts.state) };
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => addCheckpoint(parts, logA.body(0, i + 1))),
    );
    const won = answers.find((a) => a.status === 200);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const size = won?.status === 200 ? won.size : -1;
    expect(answers.filter((a) => a.status === 409 && a.held === size)).toHaveLength(15);
    expect((await witness.parts.state.latest(logA.origin))?.size).toBe(size);
    const next = await Promise.all(
      Array.from({ length: 16 }, (_, i) => addCheckpoint(parts, logA.body(size, size + i + 1))),
    );
    expect(next.filter((a) => a.status === 200)).toHaveLength(1);
    expect(next.filter((a) => a.status === 409)).toHaveLength(15);
  });
});
