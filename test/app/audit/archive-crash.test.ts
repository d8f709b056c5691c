import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { BIN, ROOT, runCli } from '../../support/cli.js';
import { goChecks, skipWithoutGoReference } from '../../support/go-reference.js';
import { CURRENT } from '../../support/runtimes.js';

/**
 * `audit archive` killed (decisions §18): over a trail of 100,096 records archived in twenty
 * steps, each step's run is killed (SIGKILL) as it writes, at a random one of its file-system
 * events, then run again. After each kill the next run succeeds, `audit verify --archive`
 * passes, and (at the end, on a snapshot of each step) Go's tlog.TileHashReader reads every
 * leaf against the checkpoint. A run killed at any instant leaves only whole files.
 */

const ORIGIN = 'case-read.test.example/audit';
const TILES = 391;
const SIZE = TILES * 256;
const ROUNDS = 20;
/** A seed for where each run is killed: CASE_READ_CRASH_SEED repeats a failing walk. */
const SEED = Number(process.env.CASE_READ_CRASH_SEED ?? Date.now() % 1_000_000);

const dir = mkdtempSync(join(tmpdir(), 'case-read-archive-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = `sqlite:${join(dir, 'audit.db')}`;
const archive = join(dir, 'archive');
let env: Record<string, string>;
let vkeyFile: string;

beforeAll(async () => {
  const keys = await generateCheckpointKeys();
  const keyFile = join(dir, 'audit-signing-key.pem');
  writeFileSync(keyFile, keys.privatePem, { mode: 0o600 });
  env = { PATH: process.env.PATH ?? '', AUDIT_SIGNING_KEY: keyFile, AUDIT_ORIGIN: ORIGIN };
  const log = SqliteAuditLog.open(join(dir, 'audit.db'));
  for (let i = 1; i <= SIZE; i++) void log.append(auditRecord(i));
  await log.flush();
  const grown = await log.growTree();
  const signer = await checkpointSigner(keys.privatePem, ORIGIN);
  await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
  log.close();
  vkeyFile = join(dir, 'audit.vkey');
  writeFileSync(vkeyFile, runCli(['audit', 'vkey'], env).stdout);
  mkdirSync(archive, { mode: 0o700 });
}, 120_000);

/** A small seeded generator (mulberry32): the kill points of one walk. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The size the archive's checkpoint signs (0 before the first). */
function archivedSize(): number {
  try {
    return Number(readFileSync(join(archive, 'checkpoint'), 'utf8').split('\n')[1]);
  } catch {
    return 0;
  }
}

/** Every file below the archive (temporary ones included), by path. */
function filesBelow(at: string, prefix = ''): string[] {
  return readdirSync(at, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesBelow(join(at, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

/** The temporary files below the archive: `.NAME.tmp-RUN`. */
const temporaries = () => filesBelow(archive).filter((f) => /(^|\/)\.[^/]+\.tmp-[0-9a-f]{16}$/.test(f));

/** `audit archive` started, and killed at its `atEvent`-th file-system event in the archive (if it gets that far). */
async function killedRun(args: string[], atEvent: number): Promise<{ killed: boolean; events: number }> {
  const child = spawn(CURRENT.command, [...CURRENT.args, BIN, ...args], { cwd: ROOT, env, stdio: 'ignore' });
  let events = 0;
  const watcher = watch(archive, { recursive: true }, () => {
    if (++events === atEvent) child.kill('SIGKILL');
  });
  const [, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  watcher.close();
  return { killed: signal === 'SIGKILL', events };
}

describe('audit archive killed at any instant', () => {
  it(`leaves only whole files; the next run completes, verify --archive and Go's TileHashReader pass (${ROUNDS} kills over ${SIZE} records)`, async () => {
    const next = random(SEED);
    const outcomes: string[] = [];
    const snapshots: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const target = Math.round((TILES * round) / ROUNDS) * 256;
      const before = archivedSize();
      const args = [
        'audit',
        'archive',
        '--to',
        archive,
        '--before',
        auditRecord(target + 1).at.toISOString(),
      ];
      // About three events a file (the temporary file, its link, its removal), two files a bundle.
      const expectedEvents = ((target - before) / 256) * 6;
      const atEvent = 1 + Math.floor(next() * expectedEvents);
      const { killed, events } = await killedRun([...args, '--audit-store', store], atEvent);
      const left = archivedSize();
      const temporary = temporaries().length;
      const where = !killed ? 'finished' : left === before ? 'mid-run' : 'after the checkpoint';
      outcomes.push(`${round}: event ${atEvent} of ${events}, ${where}, ${temporary} temporary`);
      // The checkpoint is the old one or the new one, never another.
      expect([before, target], outcomes.join('\n')).toContain(left);
      const again = runCli([...args, '--audit-store', store], env);
      expect([again.status, again.stderr], outcomes.join('\n')).toEqual([0, '']);
      expect(archivedSize()).toBe(target);
      // What the killed run left, it removed: it wrote in the same directories.
      expect(temporaries()).toEqual([]);
      const verified = runCli(['audit', 'verify', '--archive', archive, '--vkey', vkeyFile], env);
      expect([verified.status, verified.stdout], outcomes.join('\n')).toEqual([
        0,
        expect.stringMatching(new RegExp(`^audit archive intact: ${target} record\\(s\\)`)),
      ]);
      // Every archive file is immutable (linked, or renamed into place): a hard-linked copy is a snapshot.
      const snapshot = join(dir, `snapshot-${round}`);
      expect(spawnSync('cp', ['-al', archive, snapshot]).status).toBe(0);
      snapshots.push(snapshot);
    }
    console.log(`seed ${SEED}\n${outcomes.join('\n')}`);
    // Most kills land while the run writes its files: the point of the test.
    expect(outcomes.filter((o) => o.includes('mid-run')).length, outcomes.join('\n')).toBeGreaterThanOrEqual(
      ROUNDS / 2,
    );
    if (!skipWithoutGoReference) {
      expect(goChecks(snapshots.map((s) => `tiles ${vkeyFile} ${s}`))).toEqual(snapshots.map(() => 'ok'));
    }
  }, 300_000);
});
