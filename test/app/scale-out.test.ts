import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, runCli, type ServeSetup, startServe } from '../support/cli.js';
import { consumerAgent } from '../support/https-client.js';
import { adminQuery, testSchema } from '../support/postgres.js';
import { dropPrefix, OwnRedis, uniquePrefix } from '../support/redis.js';
import { windowWithRoom } from '../support/windows.js';

/**
 * Two `serve` processes sharing one PostgreSQL schema (cases, access, audit) and one Redis
 * (rate-limit counts), as two replicas behind a load balancer would.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-scale-'));
const schema = testSchema('scale');
const prefix = uniquePrefix('scale');
let redis: OwnRedis;
let setup: ServeSetup;

interface Instance {
  readonly name: string;
  readonly url: string;
  readonly managementUrl: string;
  readonly child: ChildProcess;
  readonly output: () => string;
}
let instances: Instance[] = [];

/** A second client with its own certificate, key and token: `client-q`, quota 20 a window. */
let quotaClient: { cert: string; key: string; apiKey: string; token: string };

beforeAll(async () => {
  redis = await OwnRedis.start();
  setup = prepareServe(dir, {
    stores: { CASE_STORE: schema.url, ACCESS_STORE: schema.url, AUDIT_STORE: schema.url },
  });
  const pkiDir = join(dir, 'pki');
  const cert = JSON.parse(setup.cli('pki', 'client', 'client-q', '--dir', pkiDir, '--json')) as {
    cert: string;
    key: string;
  };
  // 20 requests in a window of 10 minutes or more, chosen now so that it has 5 minutes left:
  // the instances count in windows aligned to the epoch, by their own clocks, and all 30
  // requests below must fall in one, wherever the clock is when they are sent.
  const quotaWindow = windowWithRoom(10 * 60_000, 5 * 60_000);
  setup.cli('clients', 'add', 'client-q', '--permissions', 'getCase', '--rate-limit', `20/${quotaWindow}`);
  quotaClient = {
    cert: readFileSync(cert.cert, 'utf8'),
    key: readFileSync(cert.key, 'utf8'),
    apiKey: setup.cli('keys', 'issue', 'client-q').trim(),
    token: setup.cli('tokens', 'mint', '--client', 'client-q', '--dir', pkiDir).trim(),
  };
  const env = {
    ...setup.env,
    RATE_LIMIT_STORE: redis.url,
    RATE_LIMIT_PREFIX: prefix,
    RATE_LIMIT_DEFAULT: '100000/1s',
    // The 50 ms default is for a server with cores to itself; here the load generator
    // shares two cores with both instances, and a busy event loop would turn a slow answer
    // into a failure-mode decision. The outage below is a dead Redis, refused at once.
    RATE_LIMIT_TIMEOUT_MS: '2000',
  };
  // a falls back to counting locally when Redis is lost (the default); b refuses (deny).
  const a = await startServe({ ...env, RATE_LIMIT_ON_STORE_FAILURE: 'local' });
  const b = await startServe({ ...env, RATE_LIMIT_ON_STORE_FAILURE: 'deny' });
  instances = [
    { name: 'a', ...a },
    { name: 'b', ...b },
  ];
}, 60_000);

afterAll(async () => {
  if (process.env.SCALE_DEBUG) for (const i of instances) console.log(i.name, i.output().slice(-6000));
  for (const { child } of instances) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
  await redis?.kill();
  await dropPrefix(prefix).catch(() => {});
  await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

type Outcome = { status: number; requestId: string; body: string } | { error: string };

const agents = new Map<string, Agent>();
function agentFor(credentials: { cert: string; key: string }): Agent {
  const known = agents.get(credentials.cert);
  if (known) return known;
  const agent = consumerAgent({ maxSockets: 32, ca: setup.ca, ...credentials });
  agents.set(credentials.cert, agent);
  return agent;
}

/** One GET; failures are reported, never thrown, so a load can count them. */
function get(
  instance: Instance,
  path: string,
  as: { cert: string; key: string; apiKey: string; token: string } = {
    ...setup.client,
    apiKey: setup.apiKey,
    token: setup.token,
  },
): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      `${instance.url.replace('127.0.0.1', 'localhost')}${path}`,
      {
        agent: agentFor(as),
        headers: { 'x-api-key': as.apiKey, authorization: `Bearer ${as.token}` },
        timeout: 15_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, requestId: String(res.headers['x-request-id']), body }),
        );
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('hang'), { code: 'HANG' })));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });
}

const statusOf = (o: Outcome) => ('status' in o ? o.status : o.error);
const tally = (outcomes: Outcome[]) => {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[String(statusOf(o))] = (counts[String(statusOf(o))] ?? 0) + 1;
  return counts;
};

/** Asks until the instance answers 200 or `ms` pass; the last status. */
async function answeredWithin(instance: Instance, ms: number): Promise<number | string> {
  const deadline = Date.now() + ms;
  let status = statusOf(await get(instance, '/case/X123456'));
  while (status !== 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    status = statusOf(await get(instance, '/case/X123456'));
  }
  return status;
}

function auditRecords(): { requestId: string; status: number }[] {
  const result = runCli(['audit', 'query', '--limit', '1000000', '--json'], setup.env);
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout) as { requestId: string; status: number }[];
}

function verifyAudit(): { ok: boolean; records: number } {
  const result = runCli(['audit', 'verify', '--json'], setup.env);
  const verdict = JSON.parse(result.stdout) as { ok: boolean; records: number };
  expect(result.status, result.stdout + result.stderr).toBe(verdict.ok ? 0 : 1);
  return verdict;
}

async function metric(instance: Instance, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${instance.managementUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe('two serve processes on one PostgreSQL and one Redis', () => {
  it('both are ready, and both name the shared stores', async () => {
    for (const instance of instances) {
      const ready = await fetch(`${instance.managementUrl}/health/ready`);
      expect(await ready.json()).toEqual({
        status: 'UP',
        checks: { caseStore: 'UP', accessStore: 'UP', auditStore: 'UP', rateLimitStore: 'UP' },
      });
    }
  });

  it('share one quota: 20 a window, 30 requests alternating between them → 20 × 200 and 10 × 429', async () => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 30; i++) {
      outcomes.push(await get(instances[i % 2] as Instance, '/case/X123456', quotaClient));
    }
    expect(tally(outcomes)).toEqual({ 200: 20, 429: 10 });
    // The two instances both refused: the count is shared, not split.
    const refusedBy = new Set(outcomes.flatMap((o, i) => (statusOf(o) === 429 ? [i % 2] : [])));
    expect(refusedBy).toEqual(new Set([0, 1]));
  }, 30_000);

  it('answer 200 concurrent requests spread over both, and the one trail holds each exactly once', async () => {
    const before = verifyAudit();
    expect(before.ok).toBe(true);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => get(instances[i % 2] as Instance, '/case/X123456')),
    );
    expect(tally(outcomes)).toEqual({ 200: 200 });
    const after = verifyAudit();
    expect(after).toEqual({ ok: true, records: before.records + 200 });
    const ids = auditRecords().map((r) => r.requestId);
    for (const o of outcomes) {
      expect(ids.filter((id) => 'requestId' in o && id === o.requestId)).toHaveLength(1);
    }
  }, 60_000);

  it('a key revoked with the CLI is refused by both instances within one second', async () => {
    const issued = JSON.parse(setup.cli('keys', 'issue', 'client-a', '--json')) as {
      id: string;
      key: string;
    };
    const as = { ...setup.client, apiKey: issued.key, token: setup.token };
    for (const instance of instances) expect(statusOf(await get(instance, '/case/X123456', as))).toBe(200);
    setup.cli('keys', 'revoke', issued.id);
    const revokedAt = Date.now();
    const refusedWithin: number[] = [];
    for (const instance of instances) {
      for (;;) {
        const status = statusOf(await get(instance, '/case/X123456', as));
        if (status === 403) break;
        expect(status).toBe(200);
        if (Date.now() - revokedAt > 1000) throw new Error(`instance ${instance.name} still accepts the key`);
        await new Promise((r) => setTimeout(r, 20));
      }
      refusedWithin.push(Date.now() - revokedAt);
    }
    expect(Math.max(...refusedWithin)).toBeLessThanOrEqual(1000);
  }, 30_000);

  it('a clients update --redact with the CLI is applied by both instances within one second', async () => {
    const emailOf = async (instance: Instance) => {
      const outcome = await get(instance, '/case/X123456/community-manager');
      if (!('status' in outcome) || outcome.status !== 200) throw new Error(`got ${statusOf(outcome)}`);
      return (JSON.parse(outcome.body) as { communityManager: { emailAddress: string | null } })
        .communityManager.emailAddress;
    };
    for (const instance of instances)
      expect(await emailOf(instance)).toBe('alex.testperson@probation.example');
    setup.cli('clients', 'update', 'client-a', '--redact', 'communityManager.emailAddress');
    try {
      const changedAt = Date.now();
      const appliedWithin: number[] = [];
      for (const instance of instances) {
        while ((await emailOf(instance)) !== null) {
          if (Date.now() - changedAt > 1000)
            throw new Error(`instance ${instance.name} still sends the e-mail`);
          await new Promise((r) => setTimeout(r, 20));
        }
        appliedWithin.push(Date.now() - changedAt);
      }
      expect(Math.max(...appliedWithin)).toBeLessThanOrEqual(1000);
    } finally {
      setup.cli('clients', 'update', 'client-a', '--redact', 'none');
    }
    for (const instance of instances) {
      const changedAt = Date.now();
      while ((await emailOf(instance)) === null) {
        if (Date.now() - changedAt > 1000)
          throw new Error(`instance ${instance.name} still withholds the e-mail`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }, 30_000);

  it('a clients update --limited-access with the CLI is applied by both instances within one second', async () => {
    const statusOfLimited = async (instance: Instance) => statusOf(await get(instance, '/case/L000001'));
    // The client acts as itself, set to deny: the limited fixture is refused by both.
    for (const instance of instances) expect(await statusOfLimited(instance)).toBe(403);
    setup.cli('clients', 'update', 'client-a', '--limited-access', 'allow');
    try {
      const changedAt = Date.now();
      for (const instance of instances) {
        while ((await statusOfLimited(instance)) !== 200) {
          if (Date.now() - changedAt > 1000) throw new Error(`instance ${instance.name} still refuses`);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      expect(Date.now() - changedAt).toBeLessThanOrEqual(1000);
    } finally {
      setup.cli('clients', 'update', 'client-a', '--limited-access', 'deny');
    }
    for (const instance of instances) {
      const changedAt = Date.now();
      while ((await statusOfLimited(instance)) !== 403) {
        if (Date.now() - changedAt > 1000) throw new Error(`instance ${instance.name} still answers`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }, 30_000);

  it('database connections killed mid-load: 503 in the outage, never 500, no lost record, recovery without restart', async () => {
    // Fresh connections: a keep-alive socket left idle by the tests before can reach the
    // server's 5 s idle timeout just as it is reused, a reset that says nothing about the
    // database (seen in 2 runs of ~10 before this line).
    for (const agent of agents.values()) agent.destroy();
    agents.clear();
    const before = verifyAudit();
    const killed: number[] = [];
    const load = (async () => {
      const outcomes: Outcome[] = [];
      for (let round = 0; round < 30; round++) {
        outcomes.push(
          ...(await Promise.all(
            Array.from({ length: 10 }, (_, i) => get(instances[i % 2] as Instance, '/case/X123456')),
          )),
        );
      }
      return outcomes;
    })();
    for (let k = 0; k < 3; k++) {
      await new Promise((r) => setTimeout(r, 150));
      const result = await adminQuery(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
          WHERE application_name LIKE $1 AND pid <> pg_backend_pid()`,
        [`case-read % ${schema.name}`],
      );
      killed.push(result.rowCount ?? 0);
    }
    const outcomes = await load;
    expect(killed.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const counts = tally(outcomes);
    // Nothing but 200 and 503: never a 500, never a hang or a reset.
    expect(
      Object.keys(counts).every((s) => s === '200' || s === '503'),
      JSON.stringify(counts),
    ).toBe(true);
    // Recovered by itself: both answer again.
    for (const instance of instances) expect(await answeredWithin(instance, 5000)).toBe(200);
    // Every answered request is in the one unbroken trail, exactly once.
    const after = verifyAudit();
    expect(after.ok).toBe(true);
    const ids = auditRecords().map((r) => r.requestId);
    const seen = new Map<string, number>();
    for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
    for (const o of outcomes) {
      if ('status' in o && o.status === 200) expect(seen.get(o.requestId)).toBe(1);
    }
    expect(after.records).toBeGreaterThanOrEqual(before.records + (counts['200'] ?? 0));
  }, 60_000);

  it('Redis killed mid-run: local keeps answering, deny answers 503 and is not ready; both recover', async () => {
    const [a, b] = instances as [Instance, Instance];
    expect(statusOf(await get(a, '/case/X123456'))).toBe(200);
    expect(statusOf(await get(b, '/case/X123456'))).toBe(200);
    await redis.kill();
    const duringA = await Promise.all(Array.from({ length: 10 }, () => get(a, '/case/X123456')));
    const duringB = await Promise.all(Array.from({ length: 10 }, () => get(b, '/case/X123456')));
    expect(tally(duringA)).toEqual({ 200: 10 });
    expect(tally(duringB)).toEqual({ 503: 10 });
    expect(await metric(a, 'case_read_rate_limit_store_fallback')).toBe(1);
    expect((await fetch(`${b.managementUrl}/health/ready`)).status).toBe(503);
    expect((await fetch(`${a.managementUrl}/health/ready`)).status).toBe(200);
    await redis.up();
    for (const instance of [a, b]) expect(await answeredWithin(instance, 10_000)).toBe(200);
    // a answered throughout; it goes back to Redis as soon as its client has reconnected.
    const deadline = Date.now() + 10_000;
    while ((await metric(a, 'case_read_rate_limit_store_fallback')) !== 0 && Date.now() < deadline) {
      await get(a, '/case/X123456');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await metric(a, 'case_read_rate_limit_store_fallback')).toBe(0);
    expect((await fetch(`${b.managementUrl}/health/ready`)).status).toBe(200);
    // Each instance said once that it lost Redis, with no secret and no stack (the log is
    // written through a buffer flushed every second).
    await new Promise((r) => setTimeout(r, 1500));
    for (const instance of [a, b]) {
      expect(instance.output().match(/rate-limit store unreachable/g)).toHaveLength(1);
      expect(instance.output().match(/rate-limit store is back/g)).toHaveLength(1);
      expect(instance.output()).not.toContain(setup.apiKey);
    }
  }, 60_000);
});
