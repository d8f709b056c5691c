// A large audit trail for the subject-access scenario, made once and cached: N records
// (default 10,000,000) written straight into a SQLite audit store (the chain hashes and the
// Merkle tree computed here with the service's own functions, rows inserted in large
// transactions, the indexes built after), a checkpoint of the whole tree signed with a key of
// `case-read audit keygen`, then the real `case-read audit archive --to DIR` archiving the
// oldest records (M, default 9,000,000, rounded down to whole tiles) and the store letting
// go of them. Records are realistic: getCase and the other operations, several clients,
// crns from a pool, times spread over a year; two crns of the bench's own are spread over
// the whole trail: TARGET_CRN (200 records) and BIG_CRN (20,000).
//
// The cache: $BENCH_CACHE_DIR (default: the OS temp dir's case-read-bench-cache/), one
// directory per set of parameters, kept between runs:
//   trail.db    the whole trail, never archived: what a new archive is made from
//   store.db    the store after the archive (the newest records only)
//   archive/    the archive (tlog-tiles; crn-index/ when this build writes it)
//   keys/       the signing key, its public half, audit.vkey
//   trail.json  what was made, and how long each step took (written last: a cache without it is made again)
// When the archive was made by a build that wrote no crn index and this one does (or its
// archive step failed), store.db and archive/ are made again from trail.db; remove store.db to
// have them made again after any other change to what `audit archive` writes. At 10,000,000
// records the directory holds about 8 GiB (trail.db 4.5, the archive 2.8, store.db 0.5).
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distUrl, ROOT } from './paths.mjs';
import { CLIENTS, crnlessRecord, OPERATIONS, outcomeOf, pick } from './traffic.mjs';

/** Bumped whenever what is generated changes: a cache of another version is not reused. */
const GENERATOR_VERSION = 1;
export const ORIGIN = 'case-read.bench.example/audit';
/** The crn of 200 records, and the crn of 20,000 (the pool never holds either). */
export const TARGET_CRN = 'T123456';
export const BIG_CRN = 'B654321';
/** The trail's times: a year, ending before the bench is run (so a SAR's default window holds it all). */
export const TRAIL_START = Date.UTC(2025, 10, 1);
const TRAIL_SPAN_MS = 365 * 86_400_000;

export const cacheRoot = (env = process.env) =>
  env.BENCH_CACHE_DIR ?? join(tmpdir(), 'case-read-bench-cache');

/** The time of record `seq` (1-based) of a trail of `records`: spread evenly over the year, never decreasing. */
export const timeOf = (seq, records) => TRAIL_START + Math.floor(((seq - 1) * TRAIL_SPAN_MS) / records);

/** A small, fast, seeded PRNG (mulberry32): the same trail for the same parameters. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = (random, n) => {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(random() * 16).toString(16);
  return s;
};
const uuid = (random) => {
  const h = hex(random, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[Math.floor(random() * 4)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** `count` seqs spread over 1..records, each in its own slice of the trail at a random place in it. */
function spread(count, records, random) {
  const seqs = [];
  for (let k = 0; k < count; k++) seqs.push(Math.floor(((k + 0.1 + 0.8 * random()) * records) / count) + 1);
  return seqs;
}

/** The crn each seq of the bench's own crns names: the target's and the big crn's (never the same seq twice). */
function ownCrns(records, targetCount, bigCount, random) {
  const bySeq = new Map();
  for (const [crn, count] of [
    [TARGET_CRN, targetCount],
    [BIG_CRN, bigCount],
  ]) {
    for (let seq of spread(count, records, random)) {
      while (bySeq.has(seq)) seq = (seq % records) + 1;
      bySeq.set(seq, crn);
    }
  }
  return bySeq;
}

/** The record of `seq`: a request by one of the clients, naming a crn of the pool (or `crn`), or none. */
function recordOf(seq, records, random, pool, crn) {
  const r = random();
  const [clientId, certificateSerial, , officers] = pick(CLIENTS, 2, random());
  const at = new Date(timeOf(seq, records));
  const onBehalfOf =
    officers && random() < 0.6 ? `officer.${Math.floor(random() * 400)}@probation.example` : null;
  const base = {
    at,
    requestId: uuid(random),
    clientId,
    certificateSerial,
    onBehalfOf,
    access: null,
    issued: null,
  };
  // 4% of requests name no crn (a queue token, a renewed certificate), unless it is one of the bench's.
  if (crn === undefined && r < 0.04) {
    return crnlessRecord(base, r, () => hex(random, 32).toUpperCase());
  }
  const [operation] = pick(OPERATIONS, 1, random());
  const s = random();
  const [status, problem] = outcomeOf(s);
  return {
    ...base,
    operation,
    crn: crn ?? pool[Math.floor(random() * pool.length)],
    status,
    problem,
    access: status === 200 && s > 0.995 ? 'client-enforces' : null,
  };
}

/** A pool of distinct crns (one capital letter and six digits), none of the bench's own. */
function crnPool(size, random) {
  const pool = new Set();
  while (pool.size < size) {
    const crn = `${String.fromCharCode(65 + Math.floor(random() * 26))}${String(Math.floor(random() * 1_000_000)).padStart(6, '0')}`;
    if (crn !== TARGET_CRN && crn !== BIG_CRN) pool.add(crn);
  }
  return [...pool];
}

const say = (line) => process.stdout.write(`${line}\n`);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Writes the trail of `records` into a new SQLite audit store at `path`: created by the
 * service's own adapter (its every migration), the records inserted here in their current
 * format with their chain hashes, the tree's rows grown as `growTree` grows them, a step of
 * TREE_STEP at a time, the audit table's indexes dropped before and built again after. Then
 * the adapter grows the tree (nothing left to grow: its head checked) and a checkpoint of it
 * is signed and stored, as `serve` stores one.
 */
async function writeTrail({ path, records, targetCount, bigCount, keyPem }) {
  const [
    { SqliteAuditLog },
    { chainRecord, GENESIS_HASH },
    { rowValuesOf, AUDIT_COLUMNS },
    tree,
    { sha256Hex },
  ] = await Promise.all([
    import(distUrl('adapters/sqlite/audit-log.js')),
    import(distUrl('domain/audit/chain.js')),
    import(distUrl('adapters/shared/audit-chain.js')),
    import(distUrl('adapters/shared/audit-tree.js')),
    import(distUrl('adapters/shared/sha256.js')),
  ]);
  const { checkpointSigner } = await import(distUrl('adapters/crypto/checkpoint-keys.js'));
  const { signCheckpoint } = await import(distUrl('domain/audit/checkpoint.js'));
  const { default: Database } = await import('better-sqlite3');

  SqliteAuditLog.open(path).close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1048576');
  db.pragma('temp_store = MEMORY');
  const indexes = db
    .prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit' AND sql IS NOT NULL",
    )
    .all();
  for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
  const insert = db.prepare(
    `INSERT INTO audit (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`,
  );
  const insertTree = db.prepare(tree.insertTreeRowSql(() => '?'));

  const random = prng(0x5a5 ^ records);
  const pool = crnPool(Math.max(100, Math.floor(records / 25)), random);
  const own = ownCrns(records, targetCount, bigCount, random);
  const started = performance.now();
  let previous = GENESIS_HASH;
  let tip = { size: 0, frontier: [] };
  const STEP = tree.TREE_STEP;
  const TRANSACTION = STEP * 64;
  for (let from = 1; from <= records; from += TRANSACTION) {
    const to = Math.min(records, from + TRANSACTION - 1);
    db.transaction(() => {
      for (let stepFrom = from; stepFrom <= to; stepFrom += STEP) {
        const stepTo = Math.min(to, stepFrom + STEP - 1);
        const rows = [];
        for (let seq = stepFrom; seq <= stepTo; seq++) {
          const stored = chainRecord(
            recordOf(seq, records, random, pool, own.get(seq)),
            seq,
            previous,
            sha256Hex,
          );
          previous = stored.hash;
          insert.run(...rowValuesOf(stored));
          rows.push({ seq, version: stored.version, hash: stored.hash });
        }
        const grown = tree.growBy(tip, rows, tree.leavesOf(rows));
        insertTree.run(grown.row.idx, grown.row.size, grown.row.hashes);
        tip = grown.tip;
      }
    })();
    if (to % 1_000_000 < TRANSACTION || to === records) {
      const elapsed = performance.now() - started;
      say(`  ${to} records written (${Math.round(to / (elapsed / 1000))} records/s)`);
    }
  }
  const written = performance.now();
  for (const { name, sql } of indexes) {
    const t = performance.now();
    db.exec(sql);
    say(`  index ${name} built in ${seconds(performance.now() - t)}`);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const indexed = performance.now();

  // The adapter's own view of it: the tree grown to the chain's head (nothing left to grow),
  // and a checkpoint of it signed as serve signs one.
  const log = SqliteAuditLog.open(path);
  const head = await log.growTree();
  if (head.size !== records || head.head.seq !== records) {
    throw new Error(`the trail's tree holds ${head.size} records, not ${records}`);
  }
  const signer = await checkpointSigner(keyPem, ORIGIN);
  await log.saveCheckpoint(signCheckpoint(head.head, new Date(), signer, head.root));
  const verified = await log.verify();
  log.close();
  if (!verified.ok) throw new Error(`the generated trail does not verify: ${JSON.stringify(verified)}`);
  return {
    writeMs: Math.round(written - started),
    indexMs: Math.round(indexed - written),
    verifyMs: Math.round(performance.now() - indexed),
    crns: { pool: pool.length },
  };
}

/** `node bin/case-read.js ARGV` with `env`; resolves to its stdout, rejects with its stderr unless it exits 0. */
export function runCli(argv, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/case-read.js', ...argv], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`case-read ${argv.join(' ')} exited ${code}: ${err}${out}`)),
    );
  });
}

/**
 * `case-read audit archive` on `store` into `archive`, up to record `archived` (the cutoff is
 * the time of the record after it; the command rounds down to whole tiles and to the newest
 * checkpoint), in steps of at most `step` records (each a run of the command, as a daily job
 * archives a day at a time). Resolves to what each run printed, and how long it took.
 */
async function archiveTrail({ store, archive, archived, records, step, env }) {
  const runs = [];
  for (let upTo = Math.min(archived, step); ; upTo = Math.min(archived, upTo + step)) {
    const before = new Date(timeOf(upTo + 1, records)).toISOString();
    const started = performance.now();
    const out = JSON.parse(
      await runCli(
        [
          'audit',
          'archive',
          '--to',
          archive,
          '--before',
          before,
          '--audit-store',
          `sqlite:${store}`,
          '--json',
        ],
        env,
      ),
    );
    const ms = Math.round(performance.now() - started);
    say(
      `  audit archive --before ${before}: records ${out.from + 1}..${out.to} in ${seconds(ms)}${out.forgotten ? `, the store let go of 1..${out.forgotten.upTo}` : ''}`,
    );
    runs.push({ before, from: out.from, to: out.to, files: out.files, ms });
    if (upTo >= archived) return runs;
  }
}

const bytesOf = (path) => (existsSync(path) ? statSync(path).size : 0);

/** Whether this build's `audit archive` writes a crn index (src/app/audit/crn-index.ts built). */
export const buildWritesCrnIndex = () => existsSync(new URL(distUrl('app/audit/crn-index.js')));

/**
 * The cached trail of these parameters, made (or its archive made again) when missing:
 * { dir, store, storePath, archive, keyFile, vkeyFile, env, meta }. `caseRead` is lib/cli.mjs's;
 * `root` the directory the cache is kept in (a run's own, for one not to be kept).
 */
export async function sarTrail({
  records,
  archived,
  targetCount,
  bigCount,
  archiveStep,
  caseRead,
  root = cacheRoot(),
}) {
  const dir = join(
    root,
    `subject-access-v${GENERATOR_VERSION}-${records}-${archived}-${targetCount}-${bigCount}`,
  );
  const trailPath = join(dir, 'trail.db');
  const storePath = join(dir, 'store.db');
  const archive = join(dir, 'archive');
  const keys = join(dir, 'keys');
  const keyFile = join(keys, 'audit-signing-key.pem');
  const vkeyFile = join(keys, 'audit.vkey');
  const metaFile = join(dir, 'trail.json');
  const env = { AUDIT_SIGNING_KEY: keyFile, AUDIT_ORIGIN: ORIGIN };
  let meta = existsSync(metaFile) ? JSON.parse(readFileSync(metaFile, 'utf8')) : undefined;

  if (meta === undefined) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    say(
      `generating a trail of ${records} records in ${dir}${root === cacheRoot() ? ' (kept for the next run)' : ''}`,
    );
    await caseRead(['audit', 'keygen', '--dir', keys]);
    const [vkey] = await caseRead([
      'audit',
      'vkey',
      '--public-key',
      join(keys, 'audit-signing-key.pub.pem'),
      '--origin',
      ORIGIN,
    ]);
    writeFileSync(vkeyFile, `${vkey}\n`);
    const generated = await writeTrail({
      path: trailPath,
      records,
      targetCount,
      bigCount,
      keyPem: readFileSync(keyFile, 'utf8'),
    });
    meta = {
      version: GENERATOR_VERSION,
      records,
      archived,
      targetCrn: TARGET_CRN,
      targetCount,
      bigCrn: BIG_CRN,
      bigCount,
      trailStart: new Date(TRAIL_START).toISOString(),
      trailEnd: new Date(timeOf(records, records)).toISOString(),
      generated,
      trailBytes: bytesOf(trailPath),
    };
    say(
      `  trail written in ${seconds(generated.writeMs)}, indexed in ${seconds(generated.indexMs)}, checkpointed and verified in ${seconds(generated.verifyMs)}; ${(meta.trailBytes / 2 ** 20).toFixed(0)} MiB`,
    );
  }
  const wantsIndex = buildWritesCrnIndex();
  const archiveDone =
    meta.archive !== undefined &&
    existsSync(storePath) &&
    (!wantsIndex || existsSync(join(archive, 'crn-index')));
  if (!archiveDone) {
    say(
      `archiving ${archived} of the ${records} records to ${archive}${wantsIndex ? ' (with its crn index)' : ' (this build writes no crn index)'}`,
    );
    rmSync(archive, { recursive: true, force: true });
    for (const f of [storePath, `${storePath}-wal`, `${storePath}-shm`]) rmSync(f, { force: true });
    copyFileSync(trailPath, storePath);
    const started = performance.now();
    const runs = await archiveTrail({ store: storePath, archive, archived, records, step: archiveStep, env });
    meta.archive = {
      runs,
      ms: Math.round(performance.now() - started),
      crnIndex: existsSync(join(archive, 'crn-index')),
      storeBytes: bytesOf(storePath),
    };
    say(
      `  archived in ${seconds(meta.archive.ms)}; the store is ${(meta.archive.storeBytes / 2 ** 20).toFixed(0)} MiB now`,
    );
  }
  writeFileSync(metaFile, `${JSON.stringify(meta, null, 2)}\n`);
  return { dir, store: `sqlite:${storePath}`, storePath, archive, keyFile, vkeyFile, env, meta };
}
