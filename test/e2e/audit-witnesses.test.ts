import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, runCli, type ServeSetup, startServe } from '../support/cli.js';
import { goChecks, skipWithoutGoReference } from '../support/go-reference.js';
import { httpsRequest } from '../support/https-client.js';
import { openSqlite } from '../support/sqlite.js';
import { type RunningWitness, startWitness, witnessKey } from '../support/witness.js';

/**
 * Witnessed checkpoints end to end (decisions §19, issue 54's "done when"): `serve` with an
 * AUDIT_WITNESS_POLICY of real `case-read witness serve` processes (and a stand-in that accepts
 * and never answers); what they cosign checked by `audit verify --policy`, and by Go's
 * golang.org/x/mod/sumdb/note with a cosignature/v1 verifier of its own; a trail put back to an
 * earlier copy and grown again refused by the witness, logged, counted, and failing verification.
 */

const ORIGIN = 'case-read.witness-test.example/audit';
let dir: string;
let setup: ServeSetup;
let env: Record<string, string>;
let logVkey: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-witnesses-'));
  setup = prepareServe(dir);
  const keys = runCli(['audit', 'keygen', '--dir', join(dir, 'audit-key')]);
  expect(keys.status).toBe(0);
  env = {
    ...setup.env,
    AUDIT_SIGNING_KEY: join(dir, 'audit-key', 'audit-signing-key.pem'),
    AUDIT_ORIGIN: ORIGIN,
    AUDIT_CHECKPOINT_RECORDS: '5',
    AUDIT_CHECKPOINT_SECONDS: '1',
    AUDIT_WITNESS_TIMEOUT_MS: '500',
    SHUTDOWN_DELAY_MS: '0',
  };
  logVkey = runCli(['audit', 'vkey'], env).stdout.trim();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in witness: accepts connections and never answers. */
async function hangingWitness(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A door to the witness at `url` that drops every connection until it is opened. */
async function gatedDoor(url: string): Promise<{ url: string; open(): void; close(): Promise<void> }> {
  const target = new URL(url);
  let opened = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    if (!opened) {
      socket.destroy();
      return;
    }
    const onward = connect(Number(target.port), target.hostname);
    sockets.add(onward);
    onward.on('error', () => socket.destroy());
    onward.on('close', () => sockets.delete(onward));
    socket.pipe(onward).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    open: () => {
      opened = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The records of the audit store (SQLite, read beside the running serve). */
async function auditRecords(): Promise<unknown[]> {
  const db = openSqlite(join(dir, 'audit.db'), { readonly: true });
  try {
    return db.prepare<[], { seq: number }>('SELECT seq FROM audit').all();
  } finally {
    db.close();
  }
}

function writePolicy(
  name: string,
  witnesses: readonly { name: string; vkey: string; url: string }[],
  quorum: string,
) {
  const file = join(dir, name);
  writeFileSync(
    file,
    [
      '# the trail, its witnesses and the quorum (C2SP tlog-policy)',
      `log ${logVkey}`,
      ...witnesses.map((w) => `witness ${w.name} ${w.vkey} ${w.url}`),
      quorum,
      '',
    ].join('\n'),
  );
  return file;
}

/** `n` reads of a case, each answered; the statuses. */
async function reads(url: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await httpsRequest(`${url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
      ca: setup.ca,
      ...setup.client,
      headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
    });
    statuses.push(res.status);
  }
  return statuses;
}

/** Resolves once `server` has logged a line matching `pattern` (its output so far included). */
function logged(server: Awaited<ReturnType<typeof startServe>>, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!pattern.test(server.output())) return false;
      server.child.stdout?.off('data', check);
      resolve();
      return true;
    };
    if (check()) return;
    server.child.stdout?.on('data', check);
    server.child.once('exit', () => reject(new Error(`serve exited before logging ${pattern}`)));
  });
}

/** Serve with `extra`, `n` reads, (then a line matching `waitFor` logged), SIGTERM, the exit: its log lines. */
async function serveRounds(extra: Record<string, string>, n: number, waitFor?: RegExp) {
  const server = await startServe({ ...env, ...extra });
  let statuses: number[];
  let metrics = '';
  try {
    statuses = await reads(server.url, n);
    if (waitFor !== undefined) await logged(server, waitFor);
    metrics = (await (await fetch(`${server.managementUrl}/metrics`)).text()) ?? '';
  } finally {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await exited;
  }
  const lines = server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });
  return { statuses, lines, output: server.output(), metrics };
}

describe('witnessed checkpoints', () => {
  let w1: RunningWitness;
  let w2: RunningWitness;
  let keys: { name: string; keyFile: string; vkey: string }[];

  beforeAll(async () => {
    keys = ['w1', 'w2', 'w3'].map((name) => {
      const keyDir = join(dir, `witness-${name}`);
      return { name, ...witnessKey(keyDir, `witness.test.example/${name}`) };
    });
    w1 = await startWitness(join(dir, 'witness-w1'), keys[0] as (typeof keys)[0], [logVkey]);
    w2 = await startWitness(join(dir, 'witness-w2'), keys[1] as (typeof keys)[0], [logVkey]);
  }, 60_000);
  afterAll(async () => {
    await w1?.stop();
    await w2?.stop();
  });

  it('two of three with one hanging: requests are answered, the quorum is met, Go verifies the cosignatures', async () => {
    const hanging = await hangingWitness();
    try {
      const [k1, k2, k3] = keys as [(typeof keys)[0], (typeof keys)[0], (typeof keys)[0]];
      const policy = writePolicy(
        'policy-2of3',
        [
          { name: 'w1', vkey: k1.vkey, url: w1.url },
          { name: 'w2', vkey: k2.vkey, url: w2.url },
          { name: 'w3', vkey: k3.vkey, url: hanging.url },
        ],
        'group two-of-three 2 w1 w2 w3\nquorum two-of-three',
      );
      const { statuses, lines, output } = await serveRounds({ AUDIT_WITNESS_POLICY: policy }, 24);
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(lines.some((l) => l.msg === 'audit checkpoint cosigned' && l.witness === 'w1')).toBe(true);
      expect(lines.some((l) => l.msg.startsWith('audit witness unreachable') && l.witness === 'w3')).toBe(
        true,
      );
      expect(output).not.toContain('X123456');

      const verified = runCli(['audit', 'verify', '--policy', policy], env);
      expect(verified.stderr + verified.stdout).not.toMatch(/quorum.*not met/i);
      expect(verified.status).toBe(0);

      // What `audit checkpoint` prints: the log's signature and the cosignatures, one signed note.
      const note = runCli(['audit', 'checkpoint'], env).stdout;
      expect(
        note.split('\n').filter((l) => l.startsWith('— witness.test.example/')).length,
      ).toBeGreaterThanOrEqual(2);
      if (!skipWithoutGoReference) {
        const files = join(dir, 'go');
        mkdirSync(files, { recursive: true });
        writeFileSync(join(files, 'log.vkey'), `${logVkey}\n`);
        writeFileSync(join(files, 'witnesses'), `${k1.vkey}\n${k2.vkey}\n${k3.vkey}\n`);
        writeFileSync(join(files, 'note'), note);
        writeFileSync(
          join(files, 'forged'),
          // One character of w1's signature changed (to another: never itself).
          note.replace(
            /(— witness\.test\.example\/w1 \S{20})(\S)/,
            (_, head: string, c: string) => head + (c === 'A' ? 'B' : 'A'),
          ),
        );
        const [ok, forged] = goChecks([
          `cosig ${join(files, 'log.vkey')} ${join(files, 'witnesses')} ${join(files, 'note')}`,
          `cosig ${join(files, 'log.vkey')} ${join(files, 'witnesses')} ${join(files, 'forged')}`,
        ]);
        expect(ok).toBe('ok 2');
        expect(forged).toMatch(/^fail/);
      }
    } finally {
      await hanging.close();
    }
  }, 120_000);

  it('two down: verification fails naming the quorum; one back: it passes', async () => {
    const [k1, k2, k3] = keys as [(typeof keys)[0], (typeof keys)[0], (typeof keys)[0]];
    const down = 'http://127.0.0.1:9';
    const policyDown = writePolicy(
      'policy-two-down',
      [
        { name: 'w1', vkey: k1.vkey, url: w1.url },
        { name: 'w2', vkey: k2.vkey, url: down },
        { name: 'w3', vkey: k3.vkey, url: down },
      ],
      'group two-of-three 2 w1 w2 w3\nquorum two-of-three',
    );
    const first = await serveRounds({ AUDIT_WITNESS_POLICY: policyDown }, 12);
    expect(first.statuses.every((s) => s === 200)).toBe(true);
    const failed = runCli(['audit', 'verify', '--policy', policyDown], env);
    expect(failed.status).not.toBe(0);
    expect(failed.stderr + failed.stdout).toMatch(/2 of/);
    expect(failed.stderr + failed.stdout).toMatch(/w1/);

    const policyBack = writePolicy(
      'policy-one-back',
      [
        { name: 'w1', vkey: k1.vkey, url: w1.url },
        { name: 'w2', vkey: k2.vkey, url: w2.url },
        { name: 'w3', vkey: k3.vkey, url: down },
      ],
      'group two-of-three 2 w1 w2 w3\nquorum two-of-three',
    );
    const second = await serveRounds({ AUDIT_WITNESS_POLICY: policyBack }, 6);
    expect(second.statuses.every((s) => s === 200)).toBe(true);
    expect(runCli(['audit', 'verify', '--policy', policyBack], env).status).toBe(0);
  }, 120_000);

  describe('a store put back to an earlier copy (a restore from backup, a standby promoted short)', () => {
    const store = () => join(dir, 'audit.db');
    const copy = () => join(dir, 'audit-copy.db');
    /** The audit store put back to the copy taken before the witness went on. */
    const putBack = () => {
      for (const suffix of ['', '-wal', '-shm']) {
        rmSync(store() + suffix, { force: true });
        if (existsSync(copy() + suffix)) copyFileSync(copy() + suffix, store() + suffix);
      }
    };
    /** The size w1 holds for this log, read from its own state. */
    const heldByW1 = () => {
      const db = openSqlite(join(dir, 'witness-w1', 'witness.db'), { readonly: true });
      try {
        return Number(db.prepare<[], { size: number }>('SELECT size FROM witness_logs').get()?.size);
      } finally {
        db.close();
      }
    };
    let policy: string;

    beforeAll(async () => {
      const [k1] = keys as [(typeof keys)[0]];
      policy = writePolicy('policy-w1', [{ name: 'w1', vkey: k1.vkey, url: w1.url }], 'quorum w1');
      // A copy of the trail now (its checkpoints witnessed by w1), then more records witnessed.
      await serveRounds({ AUDIT_WITNESS_POLICY: policy }, 3);
      expect(runCli(['audit', 'verify', '--policy', policy], env).status).toBe(0);
      for (const suffix of ['', '-wal', '-shm'])
        if (existsSync(store() + suffix)) copyFileSync(store() + suffix, copy() + suffix);
      await serveRounds({ AUDIT_WITNESS_POLICY: policy }, 30);
    }, 120_000);

    it("serve refuses to start, naming the store's size, the size held, the witness and the runbook; no witness moves", async () => {
      putBack();
      const held = heldByW1();
      // startServe resolves once serve listens (stopped at once here, so no server is left
      // behind) and rejects with its output when it exits first.
      const said = await startServe({ ...env, AUDIT_WITNESS_POLICY: policy }).then(
        async (server) => {
          const exited = new Promise((resolve) => server.child.once('exit', resolve));
          server.child.kill('SIGKILL');
          await exited;
          return 'serve started';
        },
        (error: unknown) => (error as Error).message,
      );
      expect(said).toMatch(/^serve exited with 1:/);
      const storeSize = Number(/trail has (\d+) records/.exec(said)?.[1]);
      expect(storeSize).toBeGreaterThan(0);
      expect(storeSize).toBeLessThan(held);
      expect(said).toContain(`w1 holds ${held} records`);
      expect(said).toContain('runbook.md#casereadauditstorebehindwitnesses');
      expect(heldByW1()).toBe(held);
    }, 60_000);

    it('found while serving: every request 503 and not recorded, readiness 503, the gauge 1', async () => {
      putBack();
      const [k1] = keys as [(typeof keys)[0]];
      // w1 reached through a door shut at start: serve starts, as with a witness down.
      const door = await gatedDoor(w1.url);
      try {
        const gated = writePolicy(
          'policy-w1-gated',
          [{ name: 'w1', vkey: k1.vkey, url: door.url }],
          'quorum w1',
        );
        const server = await startServe({ ...env, AUDIT_WITNESS_POLICY: gated });
        try {
          expect(await reads(server.url, 2)).toEqual([200, 200]);
          door.open();
          await logged(server, /every request is refused from now on/);
          const recorded = (await auditRecords()).length;
          const res = await httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
            ca: setup.ca,
            ...setup.client,
            headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
          });
          expect(res.status).toBe(503);
          expect(res.json()).toMatchObject({ type: 'urn:case-read:problem:audit-unavailable' });
          const ready = await fetch(`${server.managementUrl}/health/ready`);
          expect(ready.status).toBe(503);
          expect(await ready.json()).toMatchObject({ checks: { auditTrail: 'DOWN' } });
          const metrics = await (await fetch(`${server.managementUrl}/metrics`)).text();
          expect(metrics).toMatch(/^case_read_audit_trail_behind_witnesses 1$/m);
          // Nothing more is recorded on the short trail.
          expect((await auditRecords()).length).toBe(recorded);
        } finally {
          const exited = new Promise((resolve) => server.child.once('exit', resolve));
          server.child.kill('SIGTERM');
          await exited;
        }
      } finally {
        await door.close();
      }
    }, 120_000);
  });
});
