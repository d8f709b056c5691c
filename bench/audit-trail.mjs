#!/usr/bin/env node
// node bench/audit-trail.mjs [--records N] [--store sqlite|jsonl] [--every K] [--since S] [--keep DIR]
//
// What `case-read audit verify --public-key … --checkpoints …` costs on a large trail: it
// writes N synthetic records (default 10,000,000) through the store's own adapter, with a
// signed checkpoint every K records (default 1000, as `serve` takes them) stored beside the
// trail and also written to a log file, as `serve` logs them; then runs `audit verify` as
// its own process and prints its wall time, CPU time and peak memory (maxRSS). Needs
// `npm run build`. The trail is removed afterwards unless --keep names a directory.
//
// Each checkpoint is taken as `serve` takes it: the tree grown first, the checkpoint note of
// its root signed with it (decisions §14). With --since S (a multiple of K), it also saves
// the note of the checkpoint S records before the end and times `audit verify --since` from
// it, against the full verify: the figure issue 37 asks for (at most 1/50).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const records = Number(flag('--records', '10000000'));
const every = Number(flag('--every', '1000'));
const store = flag('--store', 'sqlite');
const keep = flag('--keep', undefined);
const since = flag('--since', undefined) === undefined ? undefined : Number(flag('--since', undefined));
if (
  since !== undefined &&
  !(Number.isSafeInteger(since) && since > 0 && since < records && since % every === 0)
) {
  process.stderr.write(
    'audit-trail: --since takes a whole number of records below --records, a multiple of --every\n',
  );
  process.exit(2);
}
const ORIGIN = 'case-read.bench.invalid/audit';
let sinceNote;
if (!(Number.isSafeInteger(records) && records > 0) || !(Number.isSafeInteger(every) && every > 0)) {
  process.stderr.write('audit-trail: --records and --every take whole numbers above 0\n');
  process.exit(2);
}
if (!['sqlite', 'jsonl'].includes(store)) {
  process.stderr.write(`audit-trail: --store takes sqlite or jsonl, not ${store}\n`);
  process.exit(2);
}

const dist = (path) => import(new URL(`../dist/${path}`, import.meta.url).href);
const { generateCheckpointKeys, checkpointSigner } = await dist('adapters/crypto/checkpoint-keys.js');
const { signCheckpoint } = await dist('domain/audit/checkpoint.js');

const dir = keep ?? mkdtempSync(join(tmpdir(), 'case-read-trail-'));
mkdirSync(dir, { recursive: true });
const path = join(dir, store === 'sqlite' ? 'audit.db' : 'audit.jsonl');
const url = `${store}:${path}`;
const keys = await generateCheckpointKeys();
writeFileSync(join(dir, 'audit-signing-key.pub.pem'), keys.publicPem);
// Kept with --keep, so that `audit archive` (which checks the store's checkpoints with it, and
// signs the archive's) can run on the trail afterwards.
if (keep) writeFileSync(join(dir, 'audit-signing-key.pem'), keys.privatePem, { mode: 0o600 });
const signer = await checkpointSigner(keys.privatePem, ORIGIN);

const log =
  store === 'sqlite'
    ? (await dist('adapters/sqlite/audit-log.js')).SqliteAuditLog.open(path)
    : (await dist('adapters/jsonl/audit-log.js')).JsonlAuditLog.open(path, { mode: 'write' });

const started = Date.now();
const logLines = [];
const BATCH = 10_000;
for (let from = 1; from <= records; from += BATCH) {
  const appends = [];
  const to = Math.min(records, from + BATCH - 1);
  for (let i = from; i <= to; i++) {
    appends.push(
      log.append({
        at: new Date(Date.UTC(2026, 0, 1) + i * 100),
        requestId: `req-${i}`,
        clientId: i % 3 ? 'client-a' : 'client-b',
        certificateSerial: '1A2B3C',
        onBehalfOf: i % 7 ? null : 'officer@probation.example',
        operation: 'getCase',
        crn: `X${String(i % 1_000_000).padStart(6, '0')}`,
        status: i % 11 ? 200 : 404,
        problem: i % 11 ? null : 'case-not-found',
        access: null,
        issued: null,
      }),
    );
    if (i % every === 0 || i === records) {
      // The head once everything before it is stored, as `serve` reads it.
      await Promise.all(appends.splice(0));
      const grown = await log.growTree();
      const checkpoint = signCheckpoint(grown.head, new Date(), signer, grown.root);
      await log.saveCheckpoint(checkpoint);
      if (since !== undefined && i === records - since) sinceNote = checkpoint.note;
      logLines.push(JSON.stringify({ level: 30, time: Date.now(), checkpoint, msg: 'audit checkpoint' }));
    }
  }
  await Promise.all(appends);
  if (to % 1_000_000 === 0) process.stderr.write(`audit-trail: ${to} records written\n`);
}
log.close();
writeFileSync(join(dir, 'serve.log'), `${logLines.join('\n')}\n`);
const bytes = statSync(path).size;
process.stdout.write(
  `wrote ${records} records and ${logLines.length} checkpoints to ${url} (${Math.round(bytes / 2 ** 20)} MiB) in ${Math.round((Date.now() - started) / 1000)} s\n`,
);

// `audit verify` in a process of its own, reporting its own time and peak memory.
const runner = `
  const { main } = await import(${JSON.stringify(new URL('../dist/app/cli.js', import.meta.url).href)});
  const t0 = Date.now();
  const status = await main(process.argv.slice(1));
  const usage = process.resourceUsage();
  process.stderr.write(JSON.stringify({ status, wallMs: Date.now() - t0, cpuMs: Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000), maxRssMiB: Math.round(usage.maxRSS / 1024) }) + '\\n');
  process.exit(status);
`;
const timed = (label, ...argv) => {
  const run = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', runner, 'audit', 'verify', '--audit-store', url, ...argv],
    {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, AUDIT_ORIGIN: ORIGIN },
    },
  );
  process.stdout.write(run.stdout);
  const measured = run.stderr.trim().split('\n').at(-1) ?? '';
  process.stdout.write(`${label}: ${measured}\n`);
  return { status: run.status ?? 1, measured: JSON.parse(measured.startsWith('{') ? measured : '{}') };
};
const publicKey = join(dir, 'audit-signing-key.pub.pem');
const full = timed('verify', '--public-key', publicKey, '--checkpoints', join(dir, 'serve.log'));
let status = full.status;
if (since !== undefined) {
  writeFileSync(join(dir, 'since.note'), sinceNote);
  const fromSaved = timed(
    `verify --since (${since} records)`,
    '--since',
    join(dir, 'since.note'),
    '--public-key',
    publicKey,
  );
  status ||= fromSaved.status;
  process.stdout.write(
    `--since / full: wall ${(fromSaved.measured.wallMs / full.measured.wallMs).toFixed(4)}, cpu ${(fromSaved.measured.cpuMs / full.measured.cpuMs).toFixed(4)}\n`,
  );
}
if (!keep) rmSync(dir, { recursive: true, force: true });
process.exit(status);
