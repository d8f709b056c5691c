import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type Agent, request } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  keepAliveAgent,
  prepareServe,
  runCli,
  type ServeSetup,
  startServe,
  stopChildren,
} from '../support/cli.js';
import { POSTGRES_URL, testSchema } from '../support/postgres.js';
import { dropPrefix, REDIS_URL, uniquePrefix } from '../support/redis.js';

/**
 * Engines that are slow, not gone (decisions §11): a PostgreSQL audit table locked by a
 * second connection (as a migration or a long transaction does), a Redis that accepts and
 * never answers, an upstream that never answers, a SQLite audit file held by another
 * writer; and a burst above MAX_IN_FLIGHT. Each test locks only its own schema's tables or
 * its own files, and stops what it started.
 */

interface Instance {
  readonly url: string;
  readonly managementUrl: string;
  readonly child: ChildProcess;
  readonly output: () => string;
}

type Outcome =
  | { status: number; requestId: string; type: string | null; ms: number; reused: boolean }
  | { error: string; ms: number };

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  await stopChildren(children);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `case-read-slow-${label}-`));
  dirs.push(dir);
  return dir;
}

async function serve(env: Record<string, string>): Promise<Instance> {
  const instance = await startServe(env);
  children.push(instance.child);
  return instance;
}

async function stop(instance: Instance): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  instance.child.kill('SIGTERM');
  await new Promise((resolve) => instance.child.once('exit', resolve));
}

/** One GET through `agent`; a failure (reset, hang) is an outcome, never thrown. */
function get(setup: ServeSetup, agent: Agent, instance: Instance, path = '/case/X123456'): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      `${instance.url.replace('127.0.0.1', 'localhost')}${path}`,
      {
        agent,
        headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
        timeout: 20_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => {
          const type = res.statusCode === 200 ? null : ((JSON.parse(body) as { type?: string }).type ?? null);
          resolve({
            status: res.statusCode ?? 0,
            requestId: String(res.headers['x-request-id']),
            type,
            ms: performance.now() - started,
            reused: req.reusedSocket,
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('hang'), { code: 'HANG' })));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code ?? error.message, ms: performance.now() - started }),
    );
    req.end();
  });
}

/** `/health/ready`: its status, its checks, and how long it took. */
async function readiness(instance: Instance) {
  const started = performance.now();
  const response = await fetch(`${instance.managementUrl}/health/ready`);
  const body = (await response.json()) as { checks?: Record<string, string> };
  return { status: response.status, checks: body.checks ?? {}, ms: performance.now() - started };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Loops of requests, each on its own keep-alive connection, until `until()` says stop. */
function loops(
  count: number,
  target: (i: number) => { setup: ServeSetup; instance: Instance; agent: Agent },
  until: () => boolean,
): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const outcomes: Outcome[] = [];
      const { setup, instance, agent } = target(i);
      while (!until()) outcomes.push(await get(setup, agent, instance));
      return outcomes;
    }),
  ).then((all) => all.flat());
}

const statuses = (outcomes: readonly Outcome[]) => {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const key = 'status' in o ? `${o.status}${o.type ? ` ${o.type.split(':').at(-1)}` : ''}` : o.error;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
};

const answered = (outcomes: readonly Outcome[]) =>
  outcomes.filter((o): o is Extract<Outcome, { status: number }> => 'status' in o);

describe('a PostgreSQL audit table locked for 12 s under eight keep-alive loops on two instances', () => {
  const DEADLINE_MS = 2_000;
  const MAX_IN_FLIGHT = 24;
  const LOCK_MS = 12_000;
  const schema = testSchema('slowaudit');
  const prefix = uniquePrefix('slow');
  afterAll(async () => {
    await schema.drop();
    await dropPrefix(prefix).catch(() => {});
  });

  it('answers every request within the deadline, refuses the burst at once, and keeps the trail true', async () => {
    const setup = prepareServe(newDir('pg'), {
      stores: { CASE_STORE: schema.url, ACCESS_STORE: schema.url, AUDIT_STORE: schema.url },
    });
    const env = {
      ...setup.env,
      RATE_LIMIT_STORE: REDIS_URL,
      RATE_LIMIT_PREFIX: prefix,
      RATE_LIMIT_DEFAULT: '100000/1s',
      REQUEST_DEADLINE_MS: String(DEADLINE_MS),
      MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
    };
    const instances = [await serve(env), await serve(env)];
    const agents = [keepAliveAgent(setup, 4), keepAliveAgent(setup, 4)];
    const burstAgents = [keepAliveAgent(setup, 250), keepAliveAgent(setup, 250)];
    try {
      // Warm: every loop connection, and the burst's 500, open before the lock.
      await Promise.all(
        instances.flatMap((instance, n) =>
          Array.from({ length: 4 }, () => get(setup, agents[n] as Agent, instance, '/case/A000001')),
        ),
      );
      // 250 at once on each: above MAX_IN_FLIGHT, so most are refused, but each opens its connection.
      await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          get(setup, burstAgents[i % 2] as Agent, instances[i % 2] as Instance, '/case/A000001'),
        ),
      );

      let stopping = false;
      const loopsDone = loops(
        8,
        (i) => ({ setup, instance: instances[i % 2] as Instance, agent: agents[i % 2] as Agent }),
        () => stopping,
      );
      await sleep(1_000);

      // The lock, held by a second connection on this test's own schema.
      const locker = new pg.Client({ connectionString: POSTGRES_URL });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${schema.name}.audit IN ACCESS EXCLUSIVE MODE`);
      const lockedAt = performance.now();
      await sleep(500);

      // A burst of 500 during the stall, on connections already open.
      const burst = await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          get(setup, burstAgents[i % 2] as Agent, instances[i % 2] as Instance, '/case/A000001'),
        ),
      );
      const ready = await Promise.all(instances.map(readiness));
      // Past the first deadlines: a statement waiting longer than the deadline was left running.
      await sleep(Math.max(0, lockedAt + 8_000 - performance.now()));
      const waiting = await schema.query(
        `SELECT count(*)::int AS n, coalesce(max(extract(epoch FROM now() - query_start)), 0)::float AS oldest
           FROM pg_stat_activity
          WHERE application_name = $1 AND state = 'active' AND wait_event_type = 'Lock'`,
        [`case-read audit store ${schema.name}`],
      );
      await sleep(Math.max(0, lockedAt + LOCK_MS - performance.now()));
      await locker.query('COMMIT');
      await locker.end();
      await sleep(2_000);
      stopping = true;
      const looped = await loopsDone;

      process.stdout.write(
        `slow-engines: loops ${JSON.stringify(statuses(looped))}, slowest ${Math.round(
          Math.max(...looped.map((o) => o.ms)),
        )} ms; burst ${JSON.stringify(statuses(burst))}, slowest refusal ${Math.round(
          Math.max(
            ...answered(burst)
              .filter((o) => o.type?.endsWith('overloaded'))
              .map((o) => o.ms),
          ),
        )} ms; readiness ${ready.map((r) => `${r.status} in ${Math.round(r.ms)} ms`).join(', ')}; oldest waiting statement ${
          waiting.rows[0]?.oldest
        } s\n`,
      );
      // Every loop request answered, none later than the deadline and a small margin.
      expect(looped.filter((o) => 'error' in o)).toEqual([]);
      const slowest = Math.max(...looped.map((o) => o.ms));
      expect(slowest, JSON.stringify(statuses(looped))).toBeLessThan(DEADLINE_MS + 1_000);
      const loopCounts = statuses(looped);
      expect(loopCounts['500 internal-error']).toBeUndefined();
      expect(loopCounts['200']).toBeGreaterThan(20);
      expect(loopCounts['503 store-unavailable']).toBeGreaterThan(8);

      // The burst: all but the places free were refused at once.
      expect(burst.filter((o) => 'error' in o)).toEqual([]);
      const overloaded = answered(burst).filter((o) => o.type === 'urn:case-read:problem:overloaded');
      expect(overloaded.length, JSON.stringify(statuses(burst))).toBeGreaterThanOrEqual(
        500 - 2 * MAX_IN_FLIGHT,
      );
      expect(Math.max(...overloaded.map((o) => o.ms))).toBeLessThan(1_000);
      expect(answered(burst).every((o) => o.status === 503)).toBe(true);

      // Readiness answered within a second, and stayed 200: overload is no reason to be taken out.
      for (const r of ready) {
        expect(r.ms).toBeLessThan(1_000);
        expect(r.status).toBe(200);
      }
      // No statement was left waiting on the lock past its request's deadline.
      expect(waiting.rows[0]?.oldest).toBeLessThan((DEADLINE_MS + 1_000) / 1000);

      // The trail: every 200 exactly once, nothing recorded 200 for an answer that was withheld.
      const rows = (await schema.query('SELECT request_id, status, problem FROM audit ORDER BY seq'))
        .rows as { request_id: string; status: number; problem: string | null }[];
      const recorded = new Map<string, { status: number; problem: string | null }[]>();
      for (const row of rows) recorded.set(row.request_id, [...(recorded.get(row.request_id) ?? []), row]);
      for (const o of answered([...looped, ...burst])) {
        const records = recorded.get(o.requestId) ?? [];
        if (o.status === 200) expect(records.map((r) => r.status)).toEqual([200]);
        else if (records.some((r) => r.status === 200)) {
          expect(records.map((r) => r.problem).at(-1)).toBe('answer-withheld');
        }
      }
      const verified = runCli(['audit', 'verify'], setup.env);
      expect(verified.stdout + verified.stderr).toMatch(/intact/);
      expect(verified.status).toBe(0);
      // The deadlines and the refusals were counted.
      const metrics = await (await fetch(`${instances[0]?.managementUrl}/metrics`)).text();
      expect(metrics).toMatch(/case_read_deadline_exceeded_total\{engine="auditStore"\} [1-9]/);
      expect(metrics).toMatch(/case_read_overloaded_total [1-9]/);
    } finally {
      for (const agent of [...agents, ...burstAgents]) agent.destroy();
      for (const instance of instances) await stop(instance);
    }
  }, 120_000);
});

describe('other engines that accept and never answer', () => {
  it('a Redis stand-in: requests are answered within the deadline, readiness within a second', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const setup = prepareServe(newDir('redis'));
    const instance = await serve({
      ...setup.env,
      RATE_LIMIT_STORE: `redis://127.0.0.1:${port}`,
      RATE_LIMIT_ON_STORE_FAILURE: 'deny',
      REQUEST_DEADLINE_MS: '1000',
    });
    const agent = keepAliveAgent(setup, 2);
    try {
      const outcomes = await Promise.all([1, 2, 3, 4].map(() => get(setup, agent, instance)));
      for (const o of outcomes) {
        expect('status' in o && o.status !== 500).toBe(true);
        expect(o.ms).toBeLessThan(1_000 + 500);
      }
      const ready = await readiness(instance);
      expect(ready.ms).toBeLessThan(1_000);
      expect(ready.status).toBe(503);
      expect(['DOWN', 'TIMEOUT']).toContain(ready.checks.rateLimitStore);
    } finally {
      agent.destroy();
      await stop(instance);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 60_000);

  it('an upstream case store: 504 at the deadline when it is shorter than the upstream timeout; the call is given up', async () => {
    let closed = 0;
    const held: HttpServer = createHttpServer((req) => {
      req.socket.on('close', () => closed++);
    });
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    const port = (held.address() as { port: number }).port;
    const setup = prepareServe(newDir('upstream'));
    const instance = await serve({
      ...setup.env,
      CASE_STORE: `http://127.0.0.1:${port}`,
      UPSTREAM_TIMEOUT_MS: '10000',
      REQUEST_DEADLINE_MS: '600',
    });
    const agent = keepAliveAgent(setup, 1);
    try {
      // Warm: the connection, and the perimeter's first reads of the access store, on a request
      // that never reaches the upstream (a malformed crn is refused after the perimeter). On a
      // busy machine a cold first request can spend its 600 ms before the upstream, and is then
      // rightly the access store's 503, not the upstream's 504.
      expect(await get(setup, agent, instance, '/case/not-a-crn')).toMatchObject({ status: 400 });
      const first = await get(setup, agent, instance);
      expect(first).toMatchObject({
        status: 504,
        type: 'urn:case-read:problem:upstream-timeout',
        reused: true,
      });
      expect(first.ms).toBeLessThan(600 + 400);
      // The upstream call was aborted, not left to run its 10 s.
      await expect.poll(() => closed, { timeout: 2_000 }).toBeGreaterThan(0);
      // The connection that waited is still good.
      const second = await get(setup, agent, instance);
      expect(second).toMatchObject({ status: 504, reused: true });
    } finally {
      agent.destroy();
      await stop(instance);
      held.closeAllConnections();
      await new Promise((resolve) => held.close(resolve));
    }
  }, 60_000);

  it('a SQLite audit file held by another writer: 503 at the deadline, the event loop free, then 200 and a true trail', async () => {
    const dir = newDir('sqlite');
    const setup = prepareServe(dir);
    const instance = await serve({ ...setup.env, REQUEST_DEADLINE_MS: '800' });
    const agent = keepAliveAgent(setup, 2);
    const writer = new Database(join(dir, 'audit.db'));
    try {
      const before = await get(setup, agent, instance);
      expect(before).toMatchObject({ status: 200 });
      writer.exec('BEGIN IMMEDIATE');
      const during = get(setup, agent, instance);
      // While that request waits on the lock, the process still answers at once.
      await sleep(200);
      const liveStarted = performance.now();
      expect((await fetch(`${instance.managementUrl}/health/live`)).status).toBe(200);
      expect(performance.now() - liveStarted).toBeLessThan(300);
      const ready = await readiness(instance);
      expect(ready.ms).toBeLessThan(1_000);
      expect(ready.status).toBe(503);
      expect(['DOWN', 'TIMEOUT']).toContain(ready.checks.auditStore);
      const held = await during;
      expect(held).toMatchObject({ status: 503 });
      expect(held.ms).toBeLessThan(800 + 400);
      writer.exec('COMMIT');
      const after = await get(setup, agent, instance);
      expect(after).toMatchObject({ status: 200 });
      await stop(instance);
      const trail = new Database(join(dir, 'audit.db'), { readonly: true });
      const rows = trail.prepare('SELECT request_id, status, problem FROM audit ORDER BY seq').all() as {
        request_id: string;
        status: number;
        problem: string | null;
      }[];
      trail.close();
      const ids = (o: Outcome) => ('requestId' in o ? o.requestId : '');
      expect(rows.filter((r) => r.request_id === ids(before)).map((r) => r.status)).toEqual([200]);
      expect(rows.filter((r) => r.request_id === ids(after)).map((r) => r.status)).toEqual([200]);
      // The withheld answer: never left recorded as a 200; its 503 is in the trail.
      const heldRows = rows.filter((r) => r.request_id === ids(held));
      expect(heldRows.at(-1)).toMatchObject({ status: 503 });
      if (heldRows.some((r) => r.status === 200)) expect(heldRows.at(-1)?.problem).toBe('answer-withheld');
      const verified = runCli(['audit', 'verify'], setup.env);
      expect(verified.status).toBe(0);
    } finally {
      if (writer.inTransaction) writer.exec('ROLLBACK');
      writer.close();
      agent.destroy();
      await stop(instance);
    }
  }, 60_000);
});
