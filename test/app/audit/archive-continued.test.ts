import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { sha256Bytes } from '../../../src/adapters/shared/sha256.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { signContinuation } from '../../../src/app/audit/continuation.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { continuationRecord, type TrailContinuation } from '../../../src/domain/audit/continuation.js';
import { verifierKeyLine } from '../../../src/tlog/note.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { prepareServe, runCli, type ServeSetup } from '../../support/cli.js';

/**
 * The archive across a break (ADR 30): a trail archived under its first log, which lost records
 * and went on as a new log (its continuation record and checkpoints as `audit continue` writes
 * them), is archived on into the same directory under the new log: the archive's tiles are the
 * one tree's, and its checkpoint, the old log's, is opened with the old log's key learned from
 * the statement. The archive then verifies under the new log's key, and subject access reads it.
 */

const OLD = 'case-read.archive-continued.example/audit';
const NEW = 'case-read.archive-continued.example/audit-2';
let dir: string;
let setup: ServeSetup;
const keyFiles = new Map<string, string>();
const env = (origin: string) => ({
  ...setup.env,
  AUDIT_SIGNING_KEY: keyFiles.get(origin) ?? '',
  AUDIT_ORIGIN: origin,
});
const archive = () => join(dir, 'archive');
let newVkey: string;
let oldVkey: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-archive-continued-'));
  setup = prepareServe(dir);
  const signers = new Map<string, Awaited<ReturnType<typeof checkpointSigner>>>();
  for (const origin of [OLD, NEW]) {
    const keys = await generateCheckpointKeys();
    const file = join(dir, `${origin === OLD ? 'old' : 'new'}-key.pem`);
    writeFileSync(file, keys.privatePem, { mode: 0o600 });
    keyFiles.set(origin, file);
    signers.set(origin, await checkpointSigner(keys.privatePem, origin));
  }
  const [before, after] = [signers.get(OLD), signers.get(NEW)] as [
    Awaited<ReturnType<typeof checkpointSigner>>,
    Awaited<ReturnType<typeof checkpointSigner>>,
  ];
  newVkey = verifierKeyLine(sha256Bytes, NEW, after.note.publicKey);
  oldVkey = verifierKeyLine(sha256Bytes, OLD, before.note.publicKey);
  const log = SqliteAuditLog.open(join(dir, 'audit.db'));
  const checkpoint = async (by: typeof before) => {
    const grown = await log.growTree();
    await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), by, grown.root));
  };
  for (let i = 1; i <= 400; i++) void log.append(auditRecord(i));
  await log.flush();
  await checkpoint(before);
  log.close();
  // The first log archived (256 records), as before any loss.
  const first = runCli(
    ['audit', 'archive', '--to', archive(), '--before', auditRecord(301).at.toISOString()],
    env(OLD),
  );
  expect([first.status, first.stderr]).toEqual([0, '']);
  // A loss after record 400, and the trail continued (as audit continue appends it).
  const reopened = SqliteAuditLog.open(join(dir, 'audit.db'));
  const c: TrailContinuation = {
    origin: NEW,
    vkey: newVkey,
    previous: OLD,
    previousVkey: verifierKeyLine(sha256Bytes, OLD, before.note.publicKey),
    kept: 400,
    held: 420,
    lastKept: auditRecord(400).at,
    broke: auditRecord(401).at,
    reason: 'restored from backup (test)',
  };
  await reopened.append(continuationRecord(c, signContinuation(c, after.note, before.note), 'continue-401'));
  for (let i = 402; i <= 700; i++) void reopened.append(auditRecord(i));
  await reopened.flush();
  const grown = await reopened.growTree();
  await reopened.saveCheckpoint(signCheckpoint(grown.head, new Date(), after, grown.root));
  reopened.close();
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an archive written before a break', () => {
  it('is archived on under the new log, verifies under its key, and subject access reads it', () => {
    const on = runCli(
      ['audit', 'archive', '--to', archive(), '--before', auditRecord(601).at.toISOString()],
      env(NEW),
    );
    expect(on.stderr).toBe('');
    expect(on.status).toBe(0);
    expect(on.stdout).toMatch(/archived records 257\.\.512/);
    const vkey = join(dir, 'new.vkey');
    writeFileSync(vkey, `${newVkey}\n`);
    // On its own the archive holds what each log signed (its crn index's first 256 under the old):
    // given both logs' keys it verifies; given the new one's alone, the old log's notes are refused.
    const both = ['--vkey', oldVkey, '--vkey', vkey];
    const verified = runCli(['audit', 'verify', '--archive', archive(), ...both], env(NEW));
    expect(verified.stdout).toMatch(/audit archive intact: 512 record\(s\)/);
    expect(verified.status).toBe(0);
    expect(runCli(['audit', 'verify', '--archive', archive(), '--vkey', vkey], env(NEW)).status).toBe(1);
    // The continuation record (401) was archived and is kept by the store all the same.
    expect(runCli(['audit', 'verify'], env(NEW)).status).toBe(0);
    const sar = runCli(
      ['subject-access', '--crn', 'X123456', '--archive', archive(), '--vkey', vkey],
      env(NEW),
    );
    expect(sar.stderr).toBe('');
    const content = (
      JSON.parse(sar.stdout) as { content: { gaps: { recordsLost: number }[]; disclosures: unknown[] } }
    ).content;
    expect(content.gaps.map((g) => g.recordsLost)).toEqual([20]);
    // Every third record names A000001, the rest X123456; record 401 is the continuation (no crn).
    const naming = Array.from({ length: 700 }, (_, i) => i + 1).filter((i) => i !== 401 && i % 3 !== 0);
    expect(content.disclosures).toHaveLength(naming.length);
  });
});
