import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { prepareServe, runCli, type ServeSetup, startServe, stopChildren } from '../../support/cli.js';

/**
 * A log keeps its name for life (decisions §18): on a trail with an archive, signed under one
 * AUDIT_ORIGIN, another is refused by `serve`, `audit archive` and the proof commands, each
 * naming both origins; with the trail's own, everything works. A checkpoint of another log's
 * name is said to be so, not taken for a key rotated.
 */

const OLD = 'case-read.old.example/audit';
const NEW = 'case-read.new.example/audit';
let dir: string;
let setup: ServeSetup;
let keyFile: string;
let publicKey: string;
let env: (origin: string) => Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-origin-'));
  setup = prepareServe(dir);
  const keys = await generateCheckpointKeys();
  keyFile = join(dir, 'audit-signing-key.pem');
  writeFileSync(keyFile, keys.privatePem, { mode: 0o600 });
  publicKey = join(dir, 'audit-signing-key.pub.pem');
  writeFileSync(publicKey, keys.publicPem);
  env = (origin) => ({ ...setup.env, AUDIT_SIGNING_KEY: keyFile, AUDIT_ORIGIN: origin });
  const log = SqliteAuditLog.open(join(dir, 'audit.db'));
  for (let i = 1; i <= 600; i++) void log.append(auditRecord(i));
  await log.flush();
  const grown = await log.growTree();
  await log.saveCheckpoint(
    signCheckpoint(grown.head, new Date(), await checkpointSigner(keys.privatePem, OLD), grown.root),
  );
  log.close();
  const archived = runCli(
    ['audit', 'archive', '--to', join(dir, 'archive'), '--before', auditRecord(301).at.toISOString()],
    env(OLD),
  );
  expect([archived.status, archived.stderr]).toEqual([0, '']);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bothNamed = new RegExp(
  `names the log ${NEW.replaceAll('.', '\\.')}, but this trail's newest checkpoint names it ${OLD.replaceAll('.', '\\.')}: a log keeps its origin for life`,
);

describe('AUDIT_ORIGIN changed on a trail with an archive', () => {
  it('serve refuses to start, naming both origins; with the old one it serves', async () => {
    await expect(startServe(env(NEW))).rejects.toThrow(bothNamed);
    const served = await startServe(env(OLD));
    await stopChildren([served.child]);
  });

  it('audit archive and the proof commands refuse, naming both; nothing is written or let go of', () => {
    const before = runCli(['audit', 'query', '--limit', '1', '--json'], env(OLD)).stdout;
    for (const args of [
      ['audit', 'archive', '--to', join(dir, 'archive'), '--older-than', '0'],
      ['audit', 'prove', '--seq', '400', '--out', join(dir, 'proofs-new')],
      ['audit', 'prove', '--consistency', '300'],
      ['audit', 'verify', '--since', join(dir, 'archive', 'checkpoint')],
    ]) {
      const refused = runCli(args, env(NEW));
      expect([args.join(' '), refused.status], refused.stderr).toEqual([args.join(' '), 1]);
      expect(refused.stderr).toMatch(bothNamed);
    }
    expect(runCli(['audit', 'query', '--limit', '1', '--json'], env(OLD)).stdout).toBe(before);
  });

  it('an archive opened under another name is said to be another log’s, not a key rotated', () => {
    const refused = runCli(
      ['audit', 'verify', '--archive', join(dir, 'archive'), '--public-key', publicKey, '--origin', NEW],
      env(OLD),
    );
    expect(refused.stdout).toMatch(
      new RegExp(
        `is of the log ${OLD.replaceAll('.', '\\.')}, not of ${NEW.replaceAll('.', '\\.')}: a log keeps its origin for life`,
      ),
    );
    expect(refused.stdout).not.toMatch(/rotated/);
    expect(refused.status).toBe(1);
  });

  it('with the trail’s own origin everything works: archive, prove, verify, verify --archive', () => {
    const ok = (args: string[]) => {
      const run = runCli(args, env(OLD));
      expect([args.join(' '), run.status, run.stderr]).toEqual([args.join(' '), 0, '']);
      return run.stdout;
    };
    expect(ok(['audit', 'archive', '--to', join(dir, 'archive'), '--older-than', '0'])).toMatch(
      /^archived records 257\.\.512/,
    );
    ok(['audit', 'prove', '--seq', '550', '--out', join(dir, 'proofs')]);
    ok(['audit', 'prove', '--consistency', '512']);
    expect(ok(['audit', 'verify', '--archive', join(dir, 'archive'), '--public-key', publicKey])).toMatch(
      /^audit archive intact: 512 record/,
    );
    expect(ok(['audit', 'verify', '--public-key', publicKey])).toMatch(/^audit chain intact/);
  });
});
