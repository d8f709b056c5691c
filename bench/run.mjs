#!/usr/bin/env node
// npm run bench [-- SCENARIO...] [--smoke] [--audit sqlite|jsonl] [--rounds N]
//
// Drives the full service (mutual TLS, API key, bearer verification, permission, SQLite
// lookup) and a bare node:https baseline with autocannon, in alternating rounds
// (A B A B ...), each server in its own process, on loopback. Prints req/s, p50, p99 and RSS
// for each, then `ratio X` (service / bare). Numbers are also written as JSON under
// bench/results/. Speed goals are judged by reading the output, never asserted here.
//
// Scenarios: keepalive (default), handshake, scale, token, engines, audit, upstream, runtimes, limited.
//   engines: the same request against SQLite + in-process counts and against PostgreSQL +
//            Redis, with the server's CPU time per request (from /proc/PID/stat).
//   audit:   audit append throughput, SQLite and PostgreSQL, from one and from two writers.
//   runtimes: the same request against `serve` started under Node, Bun and Deno (the
//            devDependencies), with each one's CPU time per request.
//   upstream: the same request against a service reading SQLite and against a second service
//            reading the first over HTTPS (CASE_STORE=https://…, mutual TLS, key, bearer).
//   limited: the same service reading a case without limited-access rules and one with
//            rules (answered under `allow`), with each one's CPU time per request.
//   keepalive and handshake take --baseline DIR (or BENCH_BASELINE=DIR) too: `serve` from another built checkout
//            (the commit before, say) as a fourth target in the same alternating rounds, and
//            print the CPU per request of this one over it.
//   tracing: the same request against the service with tracing off, on (every span
//            exported over OTLP/HTTP protobuf to a sink in this process) and on with nothing
//            sampled, with each one's CPU time per request; BENCH_BASELINE=DIR adds `serve` from another built checkout
//            (e.g. a commit before tracing existed) as a third, to show what "off" costs.
//   checkpoints: the same request against the service without and with signed audit
//            checkpoints (AUDIT_SIGNING_KEY; every 1000 records, the default, and every 100),
//            with each one's CPU time per request.
//   --postgres: `scale` generates its stores in PostgreSQL instead of SQLite.
//   --audit jsonl: the service writes its audit trail to a JSONL file instead of SQLite.
//   --rounds N: N measured rounds per server instead of 3.
// PostgreSQL and Redis: BENCH_POSTGRES_URL (postgres://root@127.0.0.1:5432/test) and
// BENCH_REDIS_URL (redis://127.0.0.1:6379); each run uses its own schemas and key prefix.
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { NODE, RUNTIMES } from '../scripts/runtimes.mjs';
import { profileTop } from './profile-top.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const flagValue = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const auditKind = flagValue('--audit') ?? 'sqlite';
if (!['sqlite', 'jsonl'].includes(auditKind)) {
  process.stderr.write(`bench: --audit takes sqlite or jsonl, not ${auditKind}\n`);
  process.exit(2);
}
const roundsOverride = flagValue('--rounds') === undefined ? undefined : Number(flagValue('--rounds'));
if (roundsOverride !== undefined && !(Number.isInteger(roundsOverride) && roundsOverride > 0)) {
  process.stderr.write('bench: --rounds takes a whole number above 0\n');
  process.exit(2);
}
const cpuProf = args.includes('--cpu-prof');
const profileDir = join(root, 'bench/results/profiles');
// Another built checkout to measure against, in the same alternating rounds: --baseline DIR
// (or BENCH_BASELINE=DIR).
const baselineCheckout = flagValue('--baseline') ?? process.env.BENCH_BASELINE;
if (baselineCheckout !== undefined && !existsSync(join(baselineCheckout, 'dist/app/cli.js'))) {
  process.stderr.write(
    `bench: --baseline ${baselineCheckout} is no built checkout (run npm ci and npm run build there)\n`,
  );
  process.exit(2);
}
const scenarios = args.filter(
  (a, i) => !a.startsWith('--') && !['--audit', '--rounds', '--baseline'].includes(args[i - 1]),
);
const KNOWN = [
  'keepalive',
  'handshake',
  'scale',
  'token',
  'engines',
  'audit',
  'upstream',
  'runtimes',
  'limited',
  'tracing',
  'checkpoints',
];
const onPostgres = args.includes('--postgres');
const PG = process.env.BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runId = `bench_${process.pid}_${Date.now().toString(36)}`;
const pgSchemas = new Set();
/** A PostgreSQL store URL in a schema of this run's own (dropped at the end). */
const pgStore = (name) => {
  pgSchemas.add(`${runId}_${name}`);
  return `${PG}?schema=${runId}_${name}`;
};
for (const s of scenarios) {
  if (!KNOWN.includes(s)) {
    process.stderr.write(`bench: unknown scenario ${s}; expected some of ${KNOWN.join(', ')}\n`);
    process.exit(2);
  }
}
const selected = scenarios.length > 0 ? scenarios : ['keepalive'];
const settings = smoke
  ? { rounds: 1, durationS: 1, warmupS: 0.5, connections: 8, handshakeConnections: 4, scaleCount: 2_000 }
  : {
      rounds: roundsOverride ?? 3,
      durationS: 10,
      warmupS: 3,
      connections: 64,
      handshakeConnections: 16,
      scaleCount: 1_000_000,
    };

const { main: cli } = await import(new URL('../dist/app/cli.js', import.meta.url).href);
const quiet = { out: () => {}, err: (l) => process.stderr.write(`${l}\n`), env: {}, stderrIsTty: false };
async function run(argv) {
  const lines = [];
  const status = await cli(argv, { ...quiet, out: (l) => lines.push(l) });
  if (status !== 0) throw new Error(`case-read ${argv.join(' ')} exited ${status}`);
  return lines;
}

// ---- fixtures: PKI, stores, client, key, token -------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'case-read-bench-'));
const pki = join(dir, 'pki');
const access = `sqlite:${join(dir, 'access.db')}`;
await run(['pki', 'init', '--dir', pki]);
await run(['pki', 'client', 'bench-client', '--dir', pki]);
await run([
  'cases',
  'import',
  join(root, 'fixtures/cases.json'),
  '--store',
  `sqlite:${join(dir, 'cases.db')}`,
]);
/** The bench client, with every permission and a queue, in an access store. */
const addBenchClient = (store) =>
  run([
    'clients',
    'add',
    'bench-client',
    '--access-store',
    store,
    '--permissions',
    'getCase,getHomeOfficeInterest,getCommunityManagerByCrn,getRiskScores,issueQueueToken',
    '--queue-arn',
    'arn:aws:sqs:eu-west-2:000000000000:bench-queue',
  ]);
await addBenchClient(access);
const [apiKey] = await run(['keys', 'issue', 'bench-client', '--access-store', access]);
const [token] = await run(['tokens', 'mint', '--client', 'bench-client', '--dir', pki, '--expires-in', '2h']);
const tls = {
  ca: readFileSync(join(pki, 'ca.pem')),
  cert: readFileSync(join(pki, 'bench-client.pem')),
  key: readFileSync(join(pki, 'bench-client-key.pem')),
};
let auditStores = 0;
const serviceEnv = (caseStore, overrides = {}) => ({
  PATH: process.env.PATH,
  HOST: '127.0.0.1',
  PORT: '0',
  MANAGEMENT_PORT: '0',
  TLS_CERT: join(pki, 'server.pem'),
  TLS_KEY: join(pki, 'server-key.pem'),
  TLS_CLIENT_CA: join(pki, 'ca.pem'),
  CASE_STORE: caseStore,
  ACCESS_STORE: access,
  AUDIT_STORE:
    auditKind === 'jsonl'
      ? `jsonl:${join(dir, `audit-${++auditStores}.jsonl`)}`
      : `sqlite:${join(dir, `audit-${++auditStores}.db`)}`,
  BEARER_MODE: 'required',
  BEARER_JWKS: join(pki, 'jwks.json'),
  BEARER_ISSUER: 'urn:case-read:dev-issuer',
  BEARER_AUDIENCE: 'case-read-service',
  CREDENTIALS_ISSUER: 'local',
  // On, with a quota high enough never to limit: the bench measures its cost, not its effect.
  RATE_LIMIT_DEFAULT: '100000000/1s',
  STS_ROLE_ARN: 'arn:aws:iam::000000000000:role/bench',
  LOG_LEVEL: 'warn',
  ...overrides,
});

// ---- processes ---------------------------------------------------------------------------
function startProcess(command, argv, env, readyMatch) {
  const child = spawn(command, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start:\n${output}`)), 20_000);
    const onData = (chunk) => {
      output += chunk.toString();
      const port = readyMatch(output);
      if (port) {
        clearTimeout(timer);
        // Stop collecting: from here on the output is only drained, never kept, so the
        // load generator in this process does no work for the server's logs.
        child.stdout.removeListener('data', onData);
        child.stderr.removeListener('data', onData);
        child.stdout.resume();
        child.stderr.resume();
        resolve({ child, port });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
  });
}
const startService = (caseStore, overrides = {}, runtime = NODE) =>
  startProcess(
    runtime.command,
    [
      ...runtime.args,
      ...(cpuProf && runtime === NODE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      'bin/case-read.js',
      'serve',
    ],
    // The bench stops each service at once: no balancer to wait for.
    { ...serviceEnv(caseStore, overrides), LOG_LEVEL: 'info', SHUTDOWN_DELAY_MS: '0' },
    (out) => {
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      return line ? new URL(JSON.parse(line).url).port : undefined;
    },
  );
const startBare = (bodyFile, script = 'bench/bare-server.mjs') =>
  startProcess(
    process.execPath,
    [
      join(root, script),
      JSON.stringify({
        bodyFile,
        apiKey,
        cert: join(pki, 'server.pem'),
        key: join(pki, 'server-key.pem'),
        ca: join(pki, 'ca.pem'),
      }),
    ],
    { PATH: process.env.PATH },
    (out) => out.match(/"port":(\d+)/)?.[1],
  );
const rssMiB = (pid) => {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return null;
  }
};
const stop = async (child) => {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
};

// ---- load --------------------------------------------------------------------------------
/**
 * A new TLS connection for every request. autocannon's reconnectRate drops the response of
 * the request it reconnects after (so reconnectRate: 1 counts nothing); this loop measures
 * the same thing directly, in autocannon's result shape.
 */
async function handshakeLoad({ port, path, method = 'GET', headers, durationS, connections }) {
  const { request } = await import('node:https');
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  const deadline = performance.now() + durationS * 1000;
  const once = () =>
    new Promise((resolve) => {
      const started = performance.now();
      const req = request(
        { host: '127.0.0.1', port, path, method, headers, servername: 'localhost', agent: false, ...tls },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            if (res.statusCode < 200 || res.statusCode > 299) non2xx++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) await once();
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    requests: { average: latencies.length / durationS },
    latency: { p50: at(0.5), p99: at(0.99) },
    non2xx,
    errors,
  };
}

function load({ port, path, method = 'GET', headers, durationS, connections, reconnect = false }) {
  if (reconnect) return handshakeLoad({ port, path, method, headers, durationS, connections });
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `https://localhost:${port}${path}`,
        method,
        headers,
        connections,
        duration: durationS,
        servername: 'localhost',
        tlsOptions: tls,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}
/** CPU time (user + system) the process has used, in milliseconds, from /proc/PID/stat. */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks at 100 Hz
};
const summarise = (result, pid, cpu) => ({
  reqPerSec: Math.round(result.requests.average),
  ...(cpu ? { cpuUsPerRequest: Math.round((cpu.ms * 1000) / Math.max(1, cpu.requests)) } : {}),
  p50: result.latency.p50,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  rssMiB: rssMiB(pid),
});
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (label, s) =>
  `${label.padEnd(9)} ${String(s.reqPerSec).padStart(7)} req/s  p50 ${String(s.p50).padStart(4)} ms  p99 ${String(s.p99).padStart(4)} ms  rss ${s.rssMiB} MiB${s.cpuUsPerRequest !== undefined ? `  cpu ${s.cpuUsPerRequest} µs/req` : ''}${s.generatorCpu !== undefined ? `  generator ${Math.round(s.generatorCpu * 100)}% of a core` : ''}${s.non2xx || s.errors ? `  (non-2xx ${s.non2xx}, errors ${s.errors})` : ''}`;
const auth = { 'x-api-key': apiKey, authorization: `Bearer ${token}` };

async function alternate(targets, request, connectionsOverride) {
  const rounds = Object.fromEntries(targets.map((t) => [t.name, []]));
  const connections =
    connectionsOverride ??
    (request(targets[0]).reconnect ? settings.handshakeConnections : settings.connections);
  for (const t of targets) await load({ ...request(t), durationS: settings.warmupS, connections });
  for (let r = 1; r <= settings.rounds; r++) {
    for (const t of targets) {
      const before = cpuMs(t.child.pid);
      const generatorBefore = process.cpuUsage();
      const started = performance.now();
      const result = await load({ ...request(t), durationS: settings.durationS, connections });
      const generator = process.cpuUsage(generatorBefore);
      const requests = result.requests.total ?? Math.round(result.requests.average * settings.durationS);
      const s = {
        ...summarise(result, t.child.pid, { ms: cpuMs(t.child.pid) - before, requests }),
        // The load generator's own CPU over the window, as a share of one core.
        generatorCpu:
          Math.round(((generator.user + generator.system) / 1000 / (performance.now() - started)) * 100) /
          100,
      };
      rounds[t.name].push(s);
      process.stdout.write(`round ${r} ${fmt(t.name, s)}\n`);
    }
  }
  const totals = Object.fromEntries(
    Object.entries(rounds).map(([name, rs]) => [
      name,
      {
        reqPerSec: Math.round(mean(rs.map((s) => s.reqPerSec))),
        p50: Math.round(mean(rs.map((s) => s.p50)) * 10) / 10,
        p99: Math.round(mean(rs.map((s) => s.p99)) * 10) / 10,
        rssMiB: Math.max(...rs.map((s) => s.rssMiB ?? 0)),
        cpuUsPerRequest: Math.round(mean(rs.map((s) => s.cpuUsPerRequest ?? 0))),
        generatorCpu: Math.round(mean(rs.map((s) => s.generatorCpu ?? 0)) * 100) / 100,
        non2xx: rs.reduce((a, s) => a + s.non2xx, 0),
        errors: rs.reduce((a, s) => a + s.errors, 0),
      },
    ]),
  );
  return { rounds, totals };
}

/**
 * The baseline checkout's own stores, made once by its own CLI (an older checkout refuses a
 * store a newer one has migrated): its case store from its own fixtures (the bench's case is
 * in every version of them), its access store, and an API key for the bench client.
 */
let baselineStores;
function baselineStoresOf(checkout) {
  if (baselineStores) return baselineStores;
  const store = `sqlite:${join(dir, 'access-baseline.db')}`;
  const caseStore = `sqlite:${join(dir, 'cases-baseline.db')}`;
  const cli = (args) =>
    execFileSync(process.execPath, [join(checkout, 'bin/case-read.js'), ...args], {
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    });
  const cliOf = (args) => cli([...args, '--access-store', store]);
  cli(['cases', 'import', join(checkout, 'fixtures/cases.json'), '--store', caseStore]);
  cliOf([
    'clients',
    'add',
    'bench-client',
    '--permissions',
    'getCase,getHomeOfficeInterest,getCommunityManagerByCrn,getRiskScores,issueQueueToken',
    '--queue-arn',
    'arn:aws:sqs:eu-west-2:000000000000:bench-queue',
  ]);
  baselineStores = {
    store,
    caseStore,
    headers: { ...auth, 'x-api-key': cliOf(['keys', 'issue', 'bench-client']).trim() },
  };
  return baselineStores;
}

/**
 * `serve` from another built checkout (its node_modules in place), on the same PKI and
 * settings, with stores of its own made by its own CLI: the commit before, measured in the
 * same alternating run. Its requests carry its own API key (`headers`).
 */
async function startBaseline(checkout) {
  const { store, caseStore, headers } = baselineStoresOf(checkout);
  const started = await startProcess(
    process.execPath,
    [join(checkout, 'bin/case-read.js'), 'serve'],
    {
      ...serviceEnv(caseStore),
      ACCESS_STORE: store,
      LOG_LEVEL: 'info',
      SHUTDOWN_DELAY_MS: '0',
    },
    (out) => {
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      return line ? new URL(JSON.parse(line).url).port : undefined;
    },
  );
  return { ...started, headers };
}

async function againstBare(name, { reconnect }) {
  const service = await startService(`sqlite:${join(dir, 'cases.db')}`);
  const sample = await load({
    port: service.port,
    path: '/case/X123456',
    headers: auth,
    durationS: 0.2,
    connections: 1,
  });
  if (sample.non2xx > 0) throw new Error('the service did not answer 200 to the benchmark request');
  const body = await fetchBody(service.port);
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, body);
  const bare = await startBare(bodyFile);
  const hono = await startBare(bodyFile, 'bench/hono-server.mjs');
  const checkout = baselineCheckout;
  const baseline = checkout ? await startBaseline(checkout) : undefined;
  try {
    const targets = [
      { name: 'bare', port: bare.port, child: bare.child },
      { name: 'hono', port: hono.port, child: hono.child },
      { name: 'service', port: service.port, child: service.child },
      ...(baseline
        ? [{ name: 'baseline', port: baseline.port, child: baseline.child, headers: baseline.headers }]
        : []),
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? auth,
      reconnect,
    }));
    const ratio = Math.round((totals.service.reqPerSec / totals.bare.reqPerSec) * 100) / 100;
    const p99Ratio = Math.round((totals.service.p99 / Math.max(totals.bare.p99, 1)) * 100) / 100;
    // Server CPU per request does not depend on which side saturates first; req/s does.
    const cpuRatio =
      Math.round((totals.bare.cpuUsPerRequest / Math.max(1, totals.service.cpuUsPerRequest)) * 100) / 100;
    // What the service costs against bare Hono on the same TLS: hono µs / service µs (1 would
    // be the framework alone). The framework's own cost against node:https is bare / hono.
    const honoCpuRatio =
      Math.round((totals.hono.cpuUsPerRequest / Math.max(1, totals.service.cpuUsPerRequest)) * 100) / 100;
    const frameworkCpuRatio =
      Math.round((totals.bare.cpuUsPerRequest / Math.max(1, totals.hono.cpuUsPerRequest)) * 100) / 100;
    // This checkout's service against the baseline's: CPU per request, below 1 is lighter.
    const baselineCpuRatio = baseline
      ? Math.round((totals.service.cpuUsPerRequest / Math.max(1, totals.baseline.cpuUsPerRequest)) * 1000) /
        1000
      : null;
    process.stdout.write(
      `${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\np99 ratio ${p99Ratio}\nhono cpu ratio ${honoCpuRatio}\nframework cpu ratio ${frameworkCpuRatio}\n${name} ratio ${ratio}\ncpu ratio ${cpuRatio}\n${
        baseline ? `cpu per request service/baseline ${baselineCpuRatio}\n` : ''
      }`,
    );
    return {
      scenario: name,
      bodyBytes: body.length,
      rounds,
      totals,
      p99Ratio,
      ratio,
      cpuRatio,
      honoCpuRatio,
      frameworkCpuRatio,
      baselineCpuRatio,
    };
  } finally {
    if (baseline) await stop(baseline.child);
    await stop(hono.child);
    await stop(bare.child);
    await stop(service.child);
  }
}

function fetchBody(port) {
  return new Promise((resolve, reject) => {
    import('node:https').then(({ request }) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/case/X123456', servername: 'localhost', headers: auth, ...tls },
        (res) => {
          let data = '';
          res.on('data', (c) => {
            data += c;
          });
          res.on('end', () => resolve(data));
        },
      );
      req.on('error', reject);
      req.end();
    });
  });
}

async function scale() {
  const small = onPostgres ? pgStore('small') : `sqlite:${join(dir, 'small.db')}`;
  const large = onPostgres ? pgStore('large') : `sqlite:${join(dir, 'large.db')}`;
  await run(['cases', 'generate', '--count', '1000', '--store', small, '--seed', '7']);
  const started = performance.now();
  await run(['cases', 'generate', '--count', String(settings.scaleCount), '--store', large, '--seed', '7']);
  process.stdout.write(
    `generated ${settings.scaleCount} cases in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  const a = await startService(small);
  const b = await startService(large);
  try {
    const targets = [
      { name: 'small', port: a.port, child: a.child },
      { name: 'large', port: b.port, child: b.child },
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/A000500',
      headers: auth,
    }));
    const ratio = Math.round((totals.large.p99 / Math.max(totals.small.p99, 1)) * 100) / 100;
    const p50Ratio = Math.round((totals.large.p50 / Math.max(totals.small.p50, 1)) * 100) / 100;
    process.stdout.write(
      `${fmt('small', totals.small)}\n${fmt('large', totals.large)}\np50 ratio large/small ${p50Ratio}\np99 ratio large/small ${ratio}\n`,
    );
    return {
      scenario: 'scale',
      caseStore: onPostgres ? 'postgres' : 'sqlite',
      cases: { small: 1000, large: settings.scaleCount },
      rounds,
      totals,
      p50Ratio,
      ratio,
      ratioOf: 'p99 large/small',
    };
  } finally {
    await stop(a.child);
    await stop(b.child);
  }
}

async function tokenScenario() {
  const service = await startService(`sqlite:${join(dir, 'cases.db')}`);
  try {
    const targets = [{ name: 'token', port: service.port, child: service.child }];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/token',
      method: 'POST',
      headers: { 'x-api-key': apiKey },
    }));
    process.stdout.write(`${fmt('token', totals.token)}\n`);
    return { scenario: 'token', rounds, totals, ratio: null };
  } finally {
    await stop(service.child);
  }
}

/**
 * The cost of deciding limited access, on one service (SQLite, the fixtures): `GET
 * /case/X123456` (a case without rules) against `GET /case/L000001` (a case with rules,
 * answered to the bench client acting as itself under `allow`, so both are 200 and both
 * take the stored-text path), alternating, with the server's CPU time per request.
 */
async function limitedScenario() {
  await run(['clients', 'update', 'bench-client', '--limited-access', 'allow', '--access-store', access]);
  const service = await startService(`sqlite:${join(dir, 'cases.db')}`);
  try {
    const targets = [
      { name: 'no-rules', port: service.port, child: service.child, path: '/case/X123456' },
      { name: 'rules', port: service.port, child: service.child, path: '/case/L000001' },
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: t.path,
      headers: auth,
    }));
    const cpuRatio =
      Math.round((totals.rules.cpuUsPerRequest / totals['no-rules'].cpuUsPerRequest) * 100) / 100;
    process.stdout.write(
      `${fmt('no-rules', totals['no-rules'])}\n${fmt('rules', totals.rules)}\ncpu per request rules/no-rules ${cpuRatio}\n`,
    );
    return { scenario: 'limited', rounds, totals, cpuRatio, ratio: null };
  } finally {
    await stop(service.child);
    await run(['clients', 'update', 'bench-client', '--limited-access', 'deny', '--access-store', access]);
  }
}

/**
 * What tracing costs: `GET /case/X123456` (the whole pipeline, keep-alive) against the
 * service with tracing off and with it on, exporting every span (parent-based, always on)
 * to an OTLP/HTTP sink in this process that only counts bytes; optionally against a
 * baseline checkout's `serve` (BENCH_BASELINE=DIR, built, its node_modules in place).
 */
async function tracingScenario() {
  const { createServer } = await import('node:http');
  let exportedBytes = 0;
  const sink = createServer((req, res) => {
    req.on('data', (chunk) => {
      exportedBytes += chunk.length;
    });
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${sink.address().port}`;
  const services = [];
  try {
    services.push({ name: 'off', ...(await startService(`sqlite:${join(dir, 'cases.db')}`)) });
    services.push({
      name: 'on',
      ...(await startService(`sqlite:${join(dir, 'cases.db')}`, {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      })),
    });
    // On, but nothing sampled: what the context manager, the wrappers and unrecorded spans cost.
    services.push({
      name: 'unsampled',
      ...(await startService(`sqlite:${join(dir, 'cases.db')}`, {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_TRACES_SAMPLER: 'always_off',
      })),
    });
    const baseline = baselineCheckout;
    if (baseline) services.push({ name: 'baseline', ...(await startBaseline(baseline)) });
    const targets = services.map((s) => ({ name: s.name, port: s.port, child: s.child, headers: s.headers }));
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? auth,
    }));
    const ratio = (a, b) => Math.round((totals[a].cpuUsPerRequest / totals[b].cpuUsPerRequest) * 100) / 100;
    const cpuRatio = ratio('on', 'off');
    process.stdout.write(
      `${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\ncpu per request on/off ${cpuRatio}, unsampled/off ${ratio('unsampled', 'off')}${
        baseline ? `, off/baseline ${ratio('off', 'baseline')}` : ''
      }\nexported ${Math.round(exportedBytes / 1024)} KiB of spans\n`,
    );
    return { scenario: 'tracing', rounds, totals, cpuRatio, exportedBytes, ratio: null };
  } finally {
    for (const s of services) await stop(s.child);
    sink.close();
  }
}

/**
 * What signed audit checkpoints cost: `GET /case/X123456` (keep-alive) against the service
 * without a signing key, with one at the default interval (1000 records or 60 s) and with
 * one every 100 records, alternating, with the server's CPU time per request and the
 * checkpoints each signed.
 */
async function checkpointsScenario() {
  const keyDir = join(dir, 'audit-key');
  await run(['audit', 'keygen', '--dir', keyDir]);
  const key = { AUDIT_SIGNING_KEY: join(keyDir, 'audit-signing-key.pem') };
  const trail = (name) => `sqlite:${join(dir, `audit-checkpoints-${name}.db`)}`;
  const services = [];
  let stopped = false;
  try {
    for (const [name, extra] of [
      ['off', {}],
      ['on', key],
      ['on-100', { ...key, AUDIT_CHECKPOINT_RECORDS: '100' }],
    ]) {
      const started = await startService(`sqlite:${join(dir, 'cases.db')}`, {
        ...extra,
        AUDIT_STORE: trail(name),
      });
      services.push({ name, ...started });
    }
    const targets = services.map((s) => ({ name: s.name, port: s.port, child: s.child, headers: s.headers }));
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? auth,
    }));
    for (const s of services) await stop(s.child);
    stopped = true;
    const ratio = (a, b) => Math.round((totals[a].cpuUsPerRequest / totals[b].cpuUsPerRequest) * 100) / 100;
    const cpuRatio = ratio('on', 'off');
    const signed = {};
    for (const name of ['on', 'on-100']) {
      signed[name] = (await run(['audit', 'checkpoints', '--json', '--audit-store', trail(name)])).length;
    }
    process.stdout.write(
      `${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\ncpu per request on/off ${cpuRatio}, on-100/off ${ratio('on-100', 'off')}\ncheckpoints signed: ${JSON.stringify(signed)}\n`,
    );
    return { scenario: 'checkpoints', rounds, totals, cpuRatio, signed, ratio: null };
  } finally {
    if (!stopped) for (const s of services) await stop(s.child);
  }
}

/**
 * The same request (`GET /case/X123456`, the whole pipeline, keep-alive) against `serve`
 * under each runtime: the same stores, each with its own audit file.
 */
async function runtimesScenario() {
  const services = [];
  try {
    for (const runtime of RUNTIMES) {
      const started = await startService(`sqlite:${join(dir, 'cases.db')}`, {}, runtime);
      services.push({ name: runtime.name, ...started });
    }
    const targets = services.map((s) => ({ name: s.name, port: s.port, child: s.child, headers: s.headers }));
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? auth,
    }));
    process.stdout.write(`${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\n`);
    return { scenario: 'runtimes', rounds, totals, ratio: null };
  } finally {
    for (const s of services) await stop(s.child);
  }
}

/**
 * The same request (`GET /case/X123456`, the whole pipeline) against two configurations:
 * every store local (SQLite cases, access and audit; rate-limit counts in process) and
 * every store shared (PostgreSQL cases, access and audit; rate-limit counts in Redis).
 */
async function engines() {
  const cases = pgStore('cases');
  await run(['cases', 'import', join(root, 'fixtures/cases.json'), '--store', cases]);
  const access = pgStore('access');
  await addBenchClient(access);
  const [pgKey] = await run(['keys', 'issue', 'bench-client', '--access-store', access]);
  const local = await startService(`sqlite:${join(dir, 'cases.db')}`);
  const shared = await startService(cases, {
    ACCESS_STORE: access,
    AUDIT_STORE: pgStore('audit'),
    RATE_LIMIT_STORE: REDIS,
    RATE_LIMIT_PREFIX: `${runId}:`,
  });
  try {
    const targets = [
      { name: 'local', port: local.port, child: local.child, key: apiKey },
      { name: 'shared', port: shared.port, child: shared.child, key: pgKey },
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: { 'x-api-key': t.key, authorization: `Bearer ${token}` },
    }));
    const cpuRatio = Math.round((totals.shared.cpuUsPerRequest / totals.local.cpuUsPerRequest) * 100) / 100;
    process.stdout.write(
      `${fmt('local', totals.local)}\n${fmt('shared', totals.shared)}\ncpu per request shared/local ${cpuRatio}\n`,
    );
    return { scenario: 'engines', rounds, totals, cpuRatio, ratio: null };
  } finally {
    await stop(local.child);
    await stop(shared.child);
  }
}

/** Audit appends per second: as many as the store takes, in rounds of 64 concurrent appends. */
async function auditScenario() {
  const { STORE_REGISTRY, storeWiring } = await import(
    new URL('../dist/app/composition/store-kinds.js', import.meta.url).href
  );
  const { CrnFormat } = await import(new URL('../dist/domain/crn.js', import.meta.url).href);
  // Every setting at its default, as `serve` would read an empty environment.
  const wiring = storeWiring(CrnFormat.default, () => {});
  const { byKind } = STORE_REGISTRY.readSettings({});
  const record = (i) => ({
    at: new Date(),
    requestId: `bench-${i}`,
    clientId: 'bench-client',
    certificateSerial: 'AB12',
    onBehalfOf: null,
    operation: 'getCase',
    crn: 'X123456',
    status: 200,
    problem: null,
    access: null,
    issued: null,
  });
  const durationMs = settings.durationS * 1000;
  const measure = async (url, writers) => {
    const logs = [];
    for (let w = 0; w < writers; w++)
      logs.push(
        await STORE_REGISTRY.openAuditLog(STORE_REGISTRY.refOf('audit', url, byKind), wiring, {
          create: true,
        }),
      );
    let appended = 0;
    const deadline = performance.now() + durationMs;
    await Promise.all(
      logs.map(async (log) => {
        while (performance.now() < deadline) {
          await Promise.all(Array.from({ length: 64 }, () => log.value.append(record(appended++))));
        }
      }),
    );
    const verdict = await logs[0].value.verify();
    for (const log of logs) await log.close();
    if (!verdict.ok) throw new Error(`the audit chain broke: ${JSON.stringify(verdict)}`);
    return Math.round(appended / settings.durationS);
  };
  const results = {
    sqlite1: await measure(`sqlite:${join(dir, 'audit-bench-1.db')}`, 1),
    sqlite2: await measure(`sqlite:${join(dir, 'audit-bench-2.db')}`, 2),
    postgres1: await measure(pgStore('audit1'), 1),
    postgres2: await measure(pgStore('audit2'), 2),
  };
  for (const [name, perSecond] of Object.entries(results)) {
    process.stdout.write(`${name.padEnd(10)} ${String(perSecond).padStart(7)} appends/s (chain verified)\n`);
  }
  return { scenario: 'audit', appendsPerSecond: results, ratio: null };
}

/**
 * The added cost of reading cases from an upstream: `sqlite` is a service reading its SQLite
 * file; `upstream` is a second service whose case store is the first, over HTTPS with the
 * bench client's certificate, an API key and a bearer token (every upstream call is a full
 * request through the first service's perimeter).
 */
async function upstreamScenario() {
  const origin = await startService(`sqlite:${join(dir, 'cases.db')}`);
  const secrets = join(dir, 'upstream-secrets');
  mkdirSync(secrets, { recursive: true });
  writeFileSync(join(secrets, 'api-key'), apiKey, { mode: 0o600 });
  writeFileSync(join(secrets, 'bearer'), token, { mode: 0o600 });
  const front = await startService(`https://localhost:${origin.port}`, {
    UPSTREAM_TLS_CERT: join(pki, 'bench-client.pem'),
    UPSTREAM_TLS_KEY: join(pki, 'bench-client-key.pem'),
    UPSTREAM_TLS_CA: join(pki, 'ca.pem'),
    UPSTREAM_API_KEY_FILE: join(secrets, 'api-key'),
    UPSTREAM_BEARER_FILE: join(secrets, 'bearer'),
  });
  try {
    const targets = [
      { name: 'sqlite', port: origin.port, child: origin.child },
      { name: 'upstream', port: front.port, child: front.child },
    ];
    const request = (t) => ({ port: t.port, path: '/case/X123456', headers: auth });
    // One connection: the latency a single request gains, with no queueing in it.
    process.stdout.write('one connection:\n');
    const single = await alternate(targets, request, 1);
    process.stdout.write(`${settings.connections} connections:\n`);
    const { rounds, totals } = await alternate(targets, request);
    const p50 = (t) => Math.round((t.upstream.p50 - t.sqlite.p50) * 10) / 10;
    // At one connection the mean latency is 1 / throughput, finer than autocannon's 1 ms.
    const mean = (t) => Math.round((1000 / t.upstream.reqPerSec - 1000 / t.sqlite.reqPerSec) * 100) / 100;
    const cpu = Math.round((totals.upstream.cpuUsPerRequest / totals.sqlite.cpuUsPerRequest) * 100) / 100;
    process.stdout.write(
      `one connection: ${fmt('sqlite', single.totals.sqlite)}\none connection: ${fmt('upstream', single.totals.upstream)}\n${fmt('sqlite', totals.sqlite)}\n${fmt('upstream', totals.upstream)}\nadded latency ${mean(single.totals)} ms (mean, one connection); added p50 ${p50(totals)} ms at ${settings.connections} connections; cpu per request upstream/sqlite ${cpu}\n`,
    );
    return {
      scenario: 'upstream',
      single: single.totals,
      rounds,
      totals,
      addedMeanMsOneConnection: mean(single.totals),
      addedP50Loaded: p50(totals),
      ratio: null,
    };
  } finally {
    await stop(front.child);
    await stop(origin.child);
  }
}

async function dropSchemas() {
  if (pgSchemas.size === 0) return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: PG });
  await client.connect();
  for (const schema of pgSchemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
}

/** The top self-time costs of the newest CPU profile, by file and by function (bench/profile-top.mjs). */
function printProfile() {
  const files = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
  const newest = files
    .map((f) => join(profileDir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) return;
  process.stdout.write(
    `profile ${newest}\n${profileTop(newest, { by: 'file', top: 12 }).join('\n')}\n${profileTop(newest, { top: 20 }).join('\n')}\n`,
  );
}

const results = [];
try {
  process.stdout.write(
    `bench: ${selected.join(', ')}${smoke ? ' (smoke: short, nothing is judged)' : ''}; ${settings.rounds} round(s) of ${settings.durationS}s, ${settings.connections} connections, node ${process.version}\n`,
  );
  process.stdout.write(
    `service pipeline: mTLS, API key, rate limit (memory), bearer (required), permission, SQLite lookup, audit (${auditKind === 'jsonl' ? 'JSONL' : 'SQLite'})\n`,
  );
  for (const scenario of selected) {
    process.stdout.write(`\n== ${scenario}\n`);
    if (scenario === 'keepalive') results.push(await againstBare('keepalive', { reconnect: false }));
    if (cpuProf) printProfile();
    if (scenario === 'handshake') results.push(await againstBare('handshake', { reconnect: true }));
    if (scenario === 'scale') results.push(await scale());
    if (scenario === 'token') results.push(await tokenScenario());
    if (scenario === 'engines') results.push(await engines());
    if (scenario === 'audit') results.push(await auditScenario());
    if (scenario === 'upstream') results.push(await upstreamScenario());
    if (scenario === 'runtimes') results.push(await runtimesScenario());
    if (scenario === 'limited') results.push(await limitedScenario());
    if (scenario === 'tracing') results.push(await tracingScenario());
    if (scenario === 'checkpoints') results.push(await checkpointsScenario());
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await dropSchemas();
}
const outDir = join(root, 'bench/results');
mkdirSync(outDir, { recursive: true });
const file = join(outDir, `${new Date().toISOString().replaceAll(':', '-')}${smoke ? '-smoke' : ''}.json`);
writeFileSync(
  file,
  `${JSON.stringify({ at: new Date().toISOString(), smoke, settings, node: process.version, results }, null, 2)}\n`,
);
process.stdout.write(`\nwrote ${file}\n`);
// The last lines: the service/bare throughput ratio and CPU ratio (bare µs per request /
// service µs per request) of the first scenario that compares them.
const headline = results.find((r) => r.scenario === 'keepalive' || r.scenario === 'handshake');
process.stdout.write(`ratio ${headline?.ratio ?? 'n/a'}\ncpu ratio ${headline?.cpuRatio ?? 'n/a'}\n`);
