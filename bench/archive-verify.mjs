#!/usr/bin/env node
// node bench/archive-verify.mjs [--records 1000000,2500000,4000000,10000000] [--baseline DIR] [--keep DIR]
//
// What `case-read audit verify --archive` costs as an archive grows (decisions §18: linear in
// files, in bounded memory). Writes one synthetic C2SP tlog-tiles archive directly, as `audit
// archive` would write it: entry bundles of real audit records (the current format, chained
// from the genesis hash, seq = leaf index + 1, each about 290 bytes: several clients, their
// operations, crns from a pool in the default pattern, one in twenty naming none), their hash
// tiles, the archive's index by crn (written by the service's own CrnIndexWriter: each group's
// shard and hashes files, the last group's and the signed note of each size) and a signed
// checkpoint. It grows the archive to each size in turn (rounded up to whole tiles of 256) as
// daily runs would: each size is a run of its own, which opens the index the one before left
// (reading back the bundles of its partial group), and the partial tiles and partial crn
// index groups of each size stay beside the next. At each size a hard-linked snapshot is
// taken, and `audit verify --archive` runs on it as a process of its own, reporting its wall
// time, CPU time and peak memory (maxRSS); with --baseline, that checkout's build too,
// alternating (a build from before the crn index is given the snapshot without crn-index/,
// which it would call added). Prints each size's figures, the rate, and the ratio of times
// from the second size (the first, when there are two) to the last. Needs `npm run build`.
// The archive is removed afterwards unless --keep names a directory.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLIENTS, crnlessRecord, OPERATIONS, outcomeOf, pick } from './lib/traffic.mjs';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000,2500000,4000000,10000000' },
    baseline: { type: 'string' },
    keep: { type: 'string' },
  },
});
const root = new URL('..', import.meta.url).pathname;
const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
const { sha256Bytes, sha256Hex } = await import(dist('adapters/shared/sha256.js'));
const { generateCheckpointKeys } = await import(dist('adapters/crypto/checkpoint-keys.js'));
const { ed25519Verify, noteSigner } = await import(dist('adapters/crypto/note-keys.js'));
const { storedIndexOf } = await import(dist('tlog/merkle.js'));
const { checkpointText, signNote } = await import(dist('tlog/note.js'));
const { bundleOf, bundlePath, TILE_HEIGHT, TILE_WIDTH, tilePath, tileRoot } = await import(
  dist('tlog/tiles.js')
);
const { chainRecord, GENESIS_HASH } = await import(dist('domain/audit/chain.js'));
const { auditEntryOf, auditLeafHash, auditRecordOfEntry } = await import(
  dist('domain/audit/canonical-text.js')
);
const { CrnIndexWriter } = await import(dist('app/audit/crn-index-write.js'));
const { TileDirectory } = await import(dist('adapters/tile-directory/tile-directory.js'));

const ORIGIN = 'case-read.bench.example/audit';
const sizes = values.records.split(',').map((n) => Math.ceil(Number(n) / TILE_WIDTH) * TILE_WIDTH);
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'case-read-archive-verify-'));
const archive = join(dir, 'archive');
mkdirSync(archive, { recursive: true, mode: 0o700 });
const keys = await generateCheckpointKeys();
const signer = noteSigner(keys.privatePem, ORIGIN);
const verifier = {
  name: signer.name,
  keyId: signer.keyId,
  publicKey: signer.publicKey,
  verify: (message, signature) => ed25519Verify(signer.publicKey, message, signature),
};
const vkeyFile = join(dir, 'audit.vkey');
writeFileSync(vkeyFile, `${signer.vkey}\n`);

const write = (path, bytes) => {
  const file = join(archive, path);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, bytes, { mode: 0o600 });
};

// The records: seeded (mulberry32), so every run writes the same trail.
let seed = 0x5eed;
const u32 = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
};
const random = () => u32() / 4294967296;
const hex32 = () => u32().toString(16).padStart(8, '0');
const uuid = () => {
  const h = hex32() + hex32() + hex32() + hex32();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[u32() & 3]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
/** The crns asked for: distinct, one capital letter and six digits (the default CRN_PATTERN). */
const POOL = (() => {
  const pool = new Set();
  while (pool.size < 100_000)
    pool.add(`${String.fromCharCode(65 + (u32() % 26))}${String(u32() % 1_000_000).padStart(6, '0')}`);
  return [...pool];
})();
/** The records' times: 100 a second from the start of 2026. */
const START = Date.UTC(2026, 0, 1);

/** The record of `seq`, as a request leaves one: a client, an operation, a crn of the pool or none. */
function recordOf(seq) {
  const r = random();
  const [clientId, certificateSerial, , officers] = pick(CLIENTS, 2, random());
  const base = {
    at: new Date(START + seq * 10 + (u32() % 10)),
    requestId: uuid(),
    clientId,
    certificateSerial,
    onBehalfOf: officers && random() < 0.6 ? `officer.${u32() % 400}@probation.example` : null,
    access: null,
    issued: null,
  };
  // 4% name no crn (a queue token, a renewed certificate); 1% asked for one that is not valid.
  if (r < 0.04) {
    return crnlessRecord(base, r, () => (hex32() + hex32() + hex32() + hex32()).toUpperCase());
  }
  const [operation] = pick(OPERATIONS, 1, random());
  if (r < 0.05) return { ...base, operation, crn: null, status: 400, problem: 'invalid-crn' };
  const s = random();
  const [status, problem] = outcomeOf(s);
  return {
    ...base,
    operation,
    crn: POOL[u32() % POOL.length],
    status,
    problem,
    access: status === 200 && s > 0.995 ? 'client-enforces' : null,
  };
}

// The tree's hashes above the leaves, a row per tile level (its hashes not yet a full tile);
// full tiles are written as they fill.
const rows = [];
const counts = [];
let records = 0;
/** The chain's last hash so far. */
let previous = GENESIS_HASH;
/** The hash of each bundle's 256 leaves, by where the store keeps it: what `audit archive` checks the bundles it reads back against. */
const bundleRoots = new Map();
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

/** What one bundle of records is: its entries (canonical texts), their leaf hashes and crns. */
const encoder = new TextEncoder();
function nextBundle() {
  const entries = [];
  const leaves = [];
  const crns = [];
  for (let i = 0; i < TILE_WIDTH; i++) {
    const seq = records + i + 1;
    const stored = chainRecord(recordOf(seq), seq, previous, sha256Hex);
    const text = auditEntryOf(stored);
    // The first bundle read back as `audit archive` reads an entry: the record, chained, to the byte.
    if (seq <= TILE_WIDTH) {
      const read = auditRecordOfEntry(text, sha256Hex);
      if (read?.seq !== seq || read.hash !== stored.hash || read.previousHash !== previous)
        throw new Error(`record ${seq}'s entry is not the record it was made of`);
    }
    previous = stored.hash;
    entries.push(encoder.encode(text));
    leaves.push(auditLeafHash(stored, sha256Bytes));
    crns.push(stored.crn);
  }
  return { entries, leaves, crns };
}

/** The index by crn is written as `audit archive` writes it, into the archive as it stands. */
const crnIndexContext = {
  hashes: { sha256: sha256Bytes, sha256Hex },
  log: {
    treeHashes: async (indexes) => new Map(indexes.map((index) => [index, bundleRoots.get(index)])),
  },
  tiles: new TileDirectory(archive),
  keys: [verifier],
  signer,
  put: async (path, bytes) => {
    const there = existsSync(join(archive, path)) ? readFileSync(join(archive, path)) : undefined;
    if (there === undefined) write(path, bytes);
    else if (!there.equals(bytes)) throw new Error(`${path} is in the archive with other bytes`);
    return there === undefined;
  },
  stillHolding: async () => {},
};

/** Whether the build of `checkout` checks the crn index (one from before it calls its files added). */
const checksCrnIndex = (checkout) => existsSync(join(checkout, 'dist/app/audit/crn-index-verify.js'));

const results = [];
/** What the last run archived: its size and root, which the next run's index opens on. */
let held = { size: 0 };
for (const size of sizes) {
  const started = Date.now();
  const crnIndex = await CrnIndexWriter.open(crnIndexContext, held);
  for (; records < size; records += TILE_WIDTH) {
    const index = records / TILE_WIDTH;
    const { entries, leaves, crns } = nextBundle();
    write(bundlePath(index), bundleOf(entries));
    write(tilePath({ level: 0, index, width: TILE_WIDTH }), Buffer.concat(leaves));
    const bundleRoot = tileRoot(sha256Bytes, leaves);
    bundleRoots.set(storedIndexOf({ level: TILE_HEIGHT, index }), bundleRoot);
    pushLevel(1, bundleRoot);
    await crnIndex.bundle(index, crns);
  }
  // The partial tiles of this size at each level above 0, the crn index's last group and its
  // note, and the signed checkpoint (a new file: the snapshots keep theirs).
  for (let level = 1; level < rows.length; level++) {
    const row = rows[level] ?? [];
    if (row.length > 0)
      write(
        tilePath({ level, index: Math.floor(counts[level] / TILE_WIDTH), width: row.length }),
        Buffer.concat(row),
      );
  }
  const treeRoot = rootNow();
  await crnIndex.seal(size, treeRoot);
  held = { size, root: treeRoot };
  write('.checkpoint.new', signNote(checkpointText(ORIGIN, size, treeRoot), signer));
  renameSync(join(archive, '.checkpoint.new'), join(archive, 'checkpoint'));
  const snapshot = join(dir, `snapshot-${size}`);
  if (spawnSync('cp', ['-al', archive, snapshot]).status !== 0) throw new Error('cp -al failed');
  process.stdout.write(
    `archive of ${size} records written in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  // A baseline built before the crn index is given the snapshot without it.
  let baselineSnapshot = snapshot;
  if (values.baseline && !checksCrnIndex(values.baseline)) {
    baselineSnapshot = `${snapshot}-without-crn-index`;
    if (spawnSync('cp', ['-al', snapshot, baselineSnapshot]).status !== 0) throw new Error('cp -al failed');
    rmSync(join(baselineSnapshot, 'crn-index'), { recursive: true, force: true });
  }
  const runs = { this: [], baseline: [] };
  for (let round = 0; round < 2; round++) {
    runs.this.push(verify(root.replace(/\/$/, ''), snapshot));
    if (values.baseline) runs.baseline.push(verify(values.baseline, baselineSnapshot));
  }
  const best = (list) => list.reduce((a, b) => (a.wallMs <= b.wallMs ? a : b), list[0]);
  const row = { size, this: best(runs.this), baseline: values.baseline ? best(runs.baseline) : undefined };
  results.push(row);
  process.stdout.write(
    `${size} records: ${row.this.line}\n  this: ${row.this.wallMs} ms wall, ${row.this.cpuMs} ms CPU, ${row.this.maxRssMiB} MiB peak, ${Math.round(size / (row.this.wallMs / 1000))} records/s` +
      (row.baseline
        ? `\n  baseline${baselineSnapshot === snapshot ? '' : ' (without the crn index)'}: ${row.baseline.wallMs} ms wall, ${row.baseline.cpuMs} ms CPU, ${row.baseline.maxRssMiB} MiB peak`
        : '') +
      '\n',
  );
}
if (results.length > 1) {
  // From the second size (the first only warms up), unless there are only two.
  const [second, last] = [results[results.length > 2 ? 1 : 0], results.at(-1)];
  process.stdout.write(
    `time ${second.size} -> ${last.size} records (x${(last.size / second.size).toFixed(2)}): x${(last.this.wallMs / second.this.wallMs).toFixed(2)}` +
      (second.baseline ? ` (baseline x${(last.baseline.wallMs / second.baseline.wallMs).toFixed(2)})` : '') +
      '\n',
  );
}
if (!values.keep) rmSync(dir, { recursive: true, force: true });
