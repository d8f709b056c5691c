#!/usr/bin/env node
// node bench/archive-verify.mjs [--records 1000000,2500000,4000000,10000000] [--baseline DIR] [--keep DIR]
//
// What `case-read audit verify --archive` costs as an archive grows (decisions §18: linear in
// files, in bounded memory). Writes one synthetic C2SP tlog-tiles archive directly (entries of
// a record's size, about 290 bytes; its hash tiles; a signed checkpoint), growing it to each
// size in turn (rounded up to whole tiles of 256) as daily runs would: the partial tiles of
// each size stay beside the next. At each size a hard-linked snapshot is taken, and `audit
// verify --archive` runs on it as a process of its own, reporting its wall time, CPU time and
// peak memory (maxRSS); with --baseline, that checkout's build too, alternating. Prints each
// size's figures, the rate, and the ratio of times from the second size to the last. Needs
// `npm run build`. The archive is removed afterwards unless --keep names a directory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000,2500000,4000000,10000000' },
    baseline: { type: 'string' },
    keep: { type: 'string' },
  },
});
const root = new URL('..', import.meta.url).pathname;
const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
const { sha256Bytes } = await import(dist('adapters/shared/sha256.js'));
const { generateCheckpointKeys } = await import(dist('adapters/crypto/checkpoint-keys.js'));
const { noteSigner } = await import(dist('adapters/crypto/note-keys.js'));
const { leafHash } = await import(dist('tlog/merkle.js'));
const { checkpointText, signNote } = await import(dist('tlog/note.js'));
const { bundleOf, bundlePath, TILE_WIDTH, tilePath, tileRoot } = await import(dist('tlog/tiles.js'));

const ORIGIN = 'case-read.bench.example/audit';
const sizes = values.records.split(',').map((n) => Math.ceil(Number(n) / TILE_WIDTH) * TILE_WIDTH);
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'case-read-archive-verify-'));
const archive = join(dir, 'archive');
mkdirSync(archive, { recursive: true, mode: 0o700 });
const keys = await generateCheckpointKeys();
const signer = noteSigner(keys.privatePem, ORIGIN);
const vkeyFile = join(dir, 'audit.vkey');
writeFileSync(vkeyFile, `${signer.vkey}\n`);

const write = (path, bytes) => {
  const file = join(archive, path);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, bytes, { mode: 0o600 });
};
/** A record's entry, about 290 bytes, as the canonical text is. */
const entryOf = (seq) =>
  new TextEncoder().encode(
    `case-read-audit/3\nseq ${seq}\nat 2026-01-01T00:00:00.${String(seq % 1000).padStart(3, '0')}Z\nrequest ${seq.toString(16).padStart(32, '0')}\nclient client-${seq % 17}\nserial 4A:0F:12:9C:33:71:0B:5E:AA:19:C2:7D:80:41:6E:93\noperation getCaseByCrn\ncrn X${String(seq % 1000000).padStart(6, '0')}\nstatus 200\nprev ${'0'.repeat(64)}\n`,
  );

// The tree's hashes above the leaves, a row per tile level (its hashes not yet a full tile);
// full tiles are written as they fill.
const rows = [];
const counts = [];
let records = 0;
const pushLevel = (level, hash) => {
  counts[level] = (counts[level] ?? 0) + 1;
  const row = rows[level] ?? [];
  rows[level] = row;
  row.push(hash);
  if (row.length < TILE_WIDTH) return;
  write(tilePath({ level, index: counts[level] / TILE_WIDTH - 1, width: TILE_WIDTH }), Buffer.concat(row));
  rows[level] = [];
  pushLevel(level + 1, tileRoot(sha256Bytes, row));
};

/** RFC 9162's root of a perfect subtree's hashes (a power of two of them). */
const perfectRoot = (hashes) =>
  hashes.length === 1
    ? hashes[0]
    : sha256Bytes(
        Uint8Array.of(1),
        perfectRoot(hashes.slice(0, hashes.length / 2)),
        perfectRoot(hashes.slice(hashes.length / 2)),
      );

/**
 * The root of the tree of `records` leaves: its pending hashes, highest level first, cut into
 * perfect subtrees (n's binary digits, left to right), folded from the right (RFC 9162).
 */
function rootNow() {
  const subtrees = [];
  for (let level = rows.length - 1; level >= 1; level--) {
    let row = rows[level] ?? [];
    while (row.length > 0) {
      let k = 1;
      while (k * 2 <= row.length) k *= 2;
      subtrees.push(perfectRoot(row.slice(0, k)));
      row = row.slice(k);
    }
  }
  let root = subtrees.pop();
  while (subtrees.length > 0) root = sha256Bytes(Uint8Array.of(1), subtrees.pop(), root);
  return root;
}

const runner = `
  const { main } = await import(process.env.CLI);
  const t0 = Date.now();
  const status = await main(process.argv.slice(1));
  const usage = process.resourceUsage();
  process.stderr.write(JSON.stringify({ status, wallMs: Date.now() - t0, cpuMs: Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000), maxRssMiB: Math.round(usage.maxRSS / 1024) }) + '\\n');
  process.exit(status);
`;
const verify = (checkout, snapshot) => {
  const run = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', runner, 'audit', 'verify', '--archive', snapshot, '--vkey', vkeyFile],
    {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, CLI: new URL(`file://${checkout}/dist/app/cli.js`).href },
    },
  );
  const measured = JSON.parse(run.stderr.trim().split('\n').at(-1) ?? '{}');
  if (measured.status !== 0) throw new Error(`verify failed on ${snapshot}: ${run.stdout}${run.stderr}`);
  return { ...measured, line: run.stdout.trim() };
};

const results = [];
for (const size of sizes) {
  const started = Date.now();
  for (; records < size; records += TILE_WIDTH) {
    const entries = Array.from({ length: TILE_WIDTH }, (_, i) => entryOf(records + i + 1));
    write(bundlePath(records / TILE_WIDTH), bundleOf(entries));
    const leaves = entries.map((entry) => leafHash(sha256Bytes, entry));
    write(tilePath({ level: 0, index: records / TILE_WIDTH, width: TILE_WIDTH }), Buffer.concat(leaves));
    pushLevel(1, tileRoot(sha256Bytes, leaves));
  }
  // The partial tiles of this size at each level above 0, and the signed checkpoint.
  for (let level = 1; level < rows.length; level++) {
    const row = rows[level] ?? [];
    if (row.length > 0)
      write(
        tilePath({ level, index: Math.floor(counts[level] / TILE_WIDTH), width: row.length }),
        Buffer.concat(row),
      );
  }
  write('checkpoint', signNote(checkpointText(ORIGIN, size, rootNow()), signer));
  const snapshot = join(dir, `snapshot-${size}`);
  if (spawnSync('cp', ['-al', archive, snapshot]).status !== 0) throw new Error('cp -al failed');
  process.stdout.write(
    `archive of ${size} records written in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  const runs = { this: [], baseline: [] };
  for (let round = 0; round < 2; round++) {
    runs.this.push(verify(root.replace(/\/$/, ''), snapshot));
    if (values.baseline) runs.baseline.push(verify(values.baseline, snapshot));
  }
  const best = (list) => list.reduce((a, b) => (a.wallMs <= b.wallMs ? a : b), list[0]);
  const row = { size, this: best(runs.this), baseline: values.baseline ? best(runs.baseline) : undefined };
  results.push(row);
  process.stdout.write(
    `${size} records: ${row.this.line}\n  this: ${row.this.wallMs} ms wall, ${row.this.cpuMs} ms CPU, ${row.this.maxRssMiB} MiB peak, ${Math.round(size / (row.this.wallMs / 1000))} records/s` +
      (row.baseline
        ? `\n  baseline: ${row.baseline.wallMs} ms wall, ${row.baseline.cpuMs} ms CPU, ${row.baseline.maxRssMiB} MiB peak`
        : '') +
      '\n',
  );
}
if (results.length > 1) {
  const [second, last] = [results[1], results.at(-1)];
  process.stdout.write(
    `time ${second.size} -> ${last.size} records (x${(last.size / second.size).toFixed(2)}): x${(last.this.wallMs / second.this.wallMs).toFixed(2)}` +
      (second.baseline ? ` (baseline x${(last.baseline.wallMs / second.baseline.wallMs).toFixed(2)})` : '') +
      '\n',
  );
}
if (!values.keep) rmSync(dir, { recursive: true, force: true });
