#!/usr/bin/env node
// node bench/archive-soak.mjs [--minutes M] [--rate R] [--every S] [--keep S] [--postgres]
//
// The audit store kept bounded (decisions §15), under continuous load: `serve` on a SQLite
// audit store (with --postgres, a schema of its own in BENCH_POSTGRES_URL, the size being the
// audit and tree tables') answering R requests a second (default 100) for M minutes (default 10), a signed
// checkpoint every 10 s, and `case-read audit archive --before (now - keep)` run every S
// seconds (default 60; keep default 60), one at a time, as the CronJob runs it. Prints the
// store's size (file and WAL) every 10 s and after each archive, every answer's status, and
// the largest size once the first archive ran. Needs `npm run build`.
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCaseRead } from './lib/cli.mjs';
import { makeWorkDir, removeWorkDir, setUpFixtures } from './lib/fixtures.mjs';
import { sharedStores } from './lib/postgres.mjs';
import { stopAll } from './lib/processes.mjs';
import { createServers } from './lib/servers.mjs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string', default: '100' },
    every: { type: 'string', default: '60' },
    keep: { type: 'string', default: '60' },
    postgres: { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const everyS = Number(values.every);
const keepS = Number(values.keep);

const dir = makeWorkDir();
const caseRead = await loadCaseRead();
const fixtures = await setUpFixtures({ dir, caseRead, auditKind: 'sqlite' });
await caseRead(['audit', 'keygen', '--dir', join(dir, 'audit-keys')]);
const auditDb = join(dir, 'audit-soak.db');
const shared = sharedStores();
const auditStore = values.postgres ? shared.pgStore('audit') : `sqlite:${auditDb}`;
let pgClient;
if (values.postgres) {
  const { default: pg } = await import('pg');
  const url = new URL(auditStore);
  const schema = url.searchParams.get('schema');
  url.search = '';
  pgClient = new pg.Client({ connectionString: url.href, options: `-c search_path=${schema}` });
  await pgClient.connect();
}
const archiveDir = join(dir, 'archive');
const signing = {
  AUDIT_SIGNING_KEY: join(dir, 'audit-keys', 'audit-signing-key.pem'),
  AUDIT_ORIGIN: 'case-read.soak.example/audit',
};
const servers = createServers({ fixtures, cpuProf: false });
const bytes = async () =>
  pgClient
    ? Number(
        (
          await pgClient.query(
            "SELECT pg_total_relation_size('audit') + pg_total_relation_size('audit_tree') AS bytes",
          )
        ).rows[0].bytes,
      )
    : statSync(auditDb).size + (existsSync(`${auditDb}-wal`) ? statSync(`${auditDb}-wal`).size : 0);
const mib = (n) => `${(n / 1024 / 1024).toFixed(2)} MiB`;
const started = Date.now();
const at = () => `${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s`;

try {
  const { child, port } = await servers.startService(fixtures.cases, {
    AUDIT_STORE: auditStore,
    AUDIT_CHECKPOINT_SECONDS: '10',
    ...signing,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 8, timeout: 30_000 });
  const statuses = new Map();
  let inFlight = 0;
  const send = () => {
    inFlight++;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/case/X123456',
        servername: 'localhost',
        agent,
        headers: fixtures.auth,
        ...fixtures.tls,
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          inFlight--;
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        });
      },
    );
    req.on('error', (error) => {
      inFlight--;
      statuses.set(error.code ?? 'error', (statuses.get(error.code ?? 'error') ?? 0) + 1);
    });
    req.end();
  };
  // R a second, in ticks of 100 ms; at most 64 in flight (an overloaded run says so in its statuses).
  const load = setInterval(() => {
    for (let i = 0; i < rate / 10; i++) {
      if (inFlight < 64) send();
      else statuses.set('skipped', (statuses.get('skipped') ?? 0) + 1);
    }
  }, 100);

  const samples = [];
  const sample = async (what) => {
    const size = await bytes();
    samples.push({ t: Date.now() - started, size, what });
    process.stdout.write(`${at()}  ${mib(size).padStart(10)}  ${what}\n`);
  };
  const sampler = setInterval(() => sample('sample'), 10_000);

  let archiving;
  let firstArchiveAt;
  const archiveOnce = () =>
    new Promise((resolve) => {
      const before = new Date(Date.now() - keepS * 1000).toISOString();
      execFile(
        process.execPath,
        [
          'bin/case-read.js',
          'audit',
          'archive',
          '--to',
          archiveDir,
          '--before',
          before,
          '--audit-store',
          auditStore,
          '--json',
        ],
        { cwd: new URL('..', import.meta.url).pathname, env: { PATH: process.env.PATH, ...signing } },
        async (error, stdout, stderr) => {
          if (error) await sample(`archive failed: ${stderr.trim()}`);
          else {
            const out = JSON.parse(stdout);
            firstArchiveAt ??= Date.now() - started;
            await sample(
              `archive: records ${out.from + 1}..${out.to}${out.forgotten ? `, store let go of 1..${out.forgotten.upTo} (${out.forgotten.records} now)` : ''}`,
            );
          }
          resolve();
        },
      );
    });
  const archiver = setInterval(() => {
    if (archiving) return;
    archiving = archiveOnce().finally(() => {
      archiving = undefined;
    });
  }, everyS * 1000);

  await new Promise((resolve) => setTimeout(resolve, minutes * 60_000));
  clearInterval(load);
  clearInterval(archiver);
  clearInterval(sampler);
  await archiving;
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  agent.destroy();
  const after = samples.filter((s) => firstArchiveAt !== undefined && s.t >= firstArchiveAt);
  const largest = Math.max(...after.map((s) => s.size));
  process.stdout.write(
    `statuses: ${JSON.stringify(Object.fromEntries(statuses))}\nlargest after the first archive: ${mib(largest)} (${after.length} samples)\n`,
  );
  child.kill('SIGTERM');
} finally {
  await stopAll();
  await pgClient?.end();
  await shared.dropSchemas();
  removeWorkDir(dir);
}
