#!/usr/bin/env node
// node bench/rss-soak.mjs [--minutes M] [--every S] [--connections C] [--checkpoints] [--baseline DIR]
//
// Memory under a long keep-alive load: `serve` as the bench runs it (every check on, SQLite
// stores, the access log at info to a pipe) answering `GET /case/X123456` from C keep-alive
// connections (default 64, autocannon) for M minutes (default 10). Its resident set
// (VmRSS, /proc/PID/status) is sampled every S seconds (default 30). Prints each sample, then
// the trend: the least-squares slope over the samples after the first minute (warm-up), in
// MiB per minute, and the largest and last sample. --checkpoints: with an audit signing key
// (a signed checkpoint every 10 s, the tree grown before each); without it the tree is never
// grown by serve. --baseline DIR: `serve` from that built checkout instead. Needs `npm run build`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCaseRead } from './lib/cli.mjs';
import { makeWorkDir, removeWorkDir, setUpFixtures } from './lib/fixtures.mjs';
import { load } from './lib/load.mjs';
import { stopAll } from './lib/processes.mjs';
import { createServers } from './lib/servers.mjs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    every: { type: 'string', default: '30' },
    connections: { type: 'string', default: '64' },
    checkpoints: { type: 'boolean', default: false },
    baseline: { type: 'string' },
  },
});
const minutes = Number(values.minutes);
const everyS = Number(values.every);
const connections = Number(values.connections);
for (const [name, value] of [
  ['--minutes', minutes],
  ['--every', everyS],
  ['--connections', connections],
]) {
  if (!(value > 0)) throw new Error(`${name} takes a positive number`);
}

const dir = makeWorkDir();
const caseRead = await loadCaseRead();
const fixtures = await setUpFixtures({ dir, caseRead, auditKind: 'sqlite' });
const signing = values.checkpoints
  ? {
      AUDIT_SIGNING_KEY: join(dir, 'audit-keys', 'audit-signing-key.pem'),
      AUDIT_CHECKPOINT_SECONDS: '10',
    }
  : {};
if (values.checkpoints) await caseRead(['audit', 'keygen', '--dir', join(dir, 'audit-keys')]);
const servers = createServers({ fixtures, cpuProf: false });
const rssMiB = (pid) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? Number.NaN) / 1024;
};
/** Least-squares slope of `y` over `x`. */
const slope = (points) => {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
};

try {
  const server = values.baseline
    ? await servers.startBaseline(values.baseline, { overrides: { LOG_LEVEL: 'info', ...signing } })
    : await servers.startService(fixtures.cases, signing);
  const headers = server.headers ?? fixtures.auth;
  const started = Date.now();
  const samples = [];
  const take = () => {
    const s = { t: (Date.now() - started) / 1000, rss: rssMiB(server.child.pid) };
    samples.push(s);
    process.stdout.write(`${s.t.toFixed(0).padStart(5)} s  ${s.rss.toFixed(1).padStart(7)} MiB\n`);
  };
  take();
  const sampler = setInterval(take, everyS * 1000);
  const result = await load({
    port: server.port,
    path: '/case/X123456',
    headers,
    durationS: minutes * 60,
    connections,
    tls: fixtures.tls,
  });
  clearInterval(sampler);
  take();
  const steady = samples.filter((s) => s.t >= 60).map((s) => ({ x: s.t / 60, y: s.rss }));
  const largest = Math.max(...samples.map((s) => s.rss));
  process.stdout.write(
    `requests: ${Math.round(result.requests.average * minutes * 60)} (${Math.round(result.requests.average)}/s), ` +
      `non-2xx ${result.non2xx}, errors ${result.errors}\n` +
      `RSS after the first minute: slope ${slope(steady).toFixed(2)} MiB/min over ${steady.length} samples; ` +
      `largest ${largest.toFixed(1)} MiB, last ${samples.at(-1)?.rss.toFixed(1)} MiB\n`,
  );
  server.child.kill('SIGTERM');
} finally {
  await stopAll();
  removeWorkDir(dir);
}
