import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../src/adapters/crypto/checkpoint-keys.js';
import { SqliteAuditLog } from '../../src/adapters/sqlite/audit-log.js';
import { signCheckpoint } from '../../src/domain/audit/checkpoint.js';
import { bundlePath, tileIndexPath, tileOfPath, tilePath, tilesOf } from '../../src/domain/audit/tiles.js';
import { auditRecord } from '../contract/audit-log.contract.js';
import { runCli } from '../support/cli.js';
import { goChecks, skipWithoutGoReference } from '../support/go-reference.js';

/**
 * `audit archive` and `audit verify --archive` (decisions §15) on a SQLite trail: the
 * C2SP tlog-tiles layout, a second archive adding files beside the first, Go's
 * `tlog.TileHashReader` reading the archive against its checkpoint, and a changed, removed or
 * added file named.
 */

const ORIGIN = 'case-read.test.example/audit';
const dir = mkdtempSync(join(tmpdir(), 'case-read-archive-'));
const store = `sqlite:${join(dir, 'audit.db')}`;
const archive = join(dir, 'archive');
let env: Record<string, string>;
let vkeyFile: string;
let publicKeyFile: string;
let sizeBefore: number;

describe('tile paths', () => {
  it('writes N in groups of three digits, every group but the last behind an x', () => {
    expect(tileIndexPath(0)).toBe('000');
    expect(tileIndexPath(5)).toBe('005');
    expect(tileIndexPath(1000)).toBe('x001/000');
    expect(tileIndexPath(1234067)).toBe('x001/x234/067');
    expect(tilePath({ level: 1, index: 1234067, width: 3 })).toBe('tile/1/x001/x234/067.p/3');
    expect(bundlePath(2)).toBe('tile/entries/002');
    expect(tileOfPath('tile/1/x001/x234/067.p/3')).toEqual({ level: 1, index: 1234067, width: 3 });
    expect(tileOfPath('tile/1/1234067')).toBeUndefined();
  });

  it('names the tiles a tree needs, and only the new ones after a smaller archive', () => {
    expect(tilesOf(768).map(tilePath)).toEqual(['tile/0/000', 'tile/0/001', 'tile/0/002', 'tile/1/000.p/3']);
    expect(tilesOf(1280, 768).map(tilePath)).toEqual(['tile/0/003', 'tile/0/004', 'tile/1/000.p/5']);
    expect(
      tilesOf(256 * 300)
        .map(tilePath)
        .slice(-3),
    ).toEqual(['tile/1/000', 'tile/1/001.p/44', 'tile/2/000.p/1']);
  });
});

beforeAll(async () => {
  const keys = await generateCheckpointKeys();
  const keyFile = join(dir, 'audit-signing-key.pem');
  writeFileSync(keyFile, keys.privatePem, { mode: 0o600 });
  publicKeyFile = join(dir, 'audit-signing-key.pub.pem');
  writeFileSync(publicKeyFile, keys.publicPem);
  env = { AUDIT_SIGNING_KEY: keyFile, AUDIT_ORIGIN: ORIGIN };
  const signer = await checkpointSigner(keys.privatePem, ORIGIN);
  const log = SqliteAuditLog.open(join(dir, 'audit.db'));
  for (let i = 1; i <= 1300; i++) void log.append(auditRecord(i));
  await log.flush();
  const grown = await log.growTree();
  await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
  log.close();
  sizeBefore = bytesOf(join(dir, 'audit.db'));
  vkeyFile = join(dir, 'audit.vkey');
  writeFileSync(vkeyFile, runCli(['audit', 'vkey'], env).stdout);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const at = (i: number) => auditRecord(i).at.toISOString();
const bytesOf = (file: string) =>
  statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
const verifyArchive = () => runCli(['audit', 'verify', '--archive', archive, '--vkey', vkeyFile], env);

describe('audit archive', () => {
  it('writes whole tiles of the records before a time; a later archive adds files beside them', () => {
    const first = runCli(
      ['audit', 'archive', '--to', archive, '--before', at(1000), '--audit-store', store],
      env,
    );
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/^archived records 1\.\.768 to /);
    expect(readFileSync(join(archive, 'checkpoint'), 'utf8')).toMatch(new RegExp(`^${ORIGIN}\\n768\\n`));
    const partial = readFileSync(join(archive, 'tile/1/000.p/3'));
    // Again with the same time: nothing new.
    expect(
      runCli(['audit', 'archive', '--to', archive, '--before', at(1000), '--audit-store', store], env).stdout,
    ).toMatch(/^nothing to archive/);
    const second = runCli(
      ['audit', 'archive', '--to', archive, '--older-than', '0', '--audit-store', store],
      env,
    );
    expect(second.stdout).toMatch(/^archived records 769\.\.1280 to /);
    for (const file of ['tile/entries/004', 'tile/0/004', 'tile/1/000.p/5'])
      expect(existsSync(join(archive, file))).toBe(true);
    // The first archive's files are as they were written.
    expect(readFileSync(join(archive, 'tile/1/000.p/3')).equals(partial)).toBe(true);
    const verified = verifyArchive();
    expect(verified.stdout).toMatch(/^audit archive intact: 1280 record\(s\)/);
    expect(verified.status).toBe(0);
  });

  it('then the store lets go of the archived records, is smaller, and verifies from the boundary', () => {
    expect(bytesOf(join(dir, 'audit.db'))).toBeLessThan(sizeBefore * 0.5);
    const held = runCli(['audit', 'query', '--audit-store', store, '--json'], env);
    expect(JSON.parse(held.stdout).map((r: { seq: number }) => r.seq)).toEqual(
      Array.from({ length: 20 }, (_, i) => 1281 + i),
    );
    const verified = runCli(['audit', 'verify', '--audit-store', store, '--public-key', publicKeyFile], env);
    expect(verified.stdout).toMatch(/^audit chain intact: 20 record\(s\), 1 signed checkpoint\(s\) verified/);
    expect(verified.stdout).toMatch(/records 1\.\.1280 were archived and let go of: the walk began at 1281/);
    expect(verified.status).toBe(0);
    // A new, empty directory cannot take records the store no longer holds.
    const elsewhere = runCli(
      ['audit', 'archive', '--to', join(dir, 'elsewhere'), '--older-than', '0', '--audit-store', store],
      env,
    );
    expect(elsewhere.stderr).toMatch(/let go of records 1\.\.1280 after archiving them, and .* holds none/);
    expect(elsewhere.status).toBe(1);
  });

  it('query --archive finds an archived record; prove --archive proves it against the archive’s checkpoint', () => {
    const found = runCli(
      ['audit', 'query', '--archive', archive, '--vkey', vkeyFile, '--request-id', 'req-700', '--json'],
      env,
    );
    expect(found.stderr).toBe('');
    expect(JSON.parse(found.stdout)).toMatchObject([
      { seq: 700, requestId: 'req-700', clientId: 'client-b' },
    ]);
    const byClient = runCli(
      ['audit', 'query', '--archive', archive, '--vkey', vkeyFile, '--limit', '3'],
      env,
    );
    expect(byClient.stdout.trim().split('\n')).toHaveLength(3);
    const out = join(dir, 'proofs');
    const proved = runCli(
      ['audit', 'prove', 'req-700', '--archive', archive, '--vkey', vkeyFile, '--out', out],
      env,
    );
    expect(proved.stdout).toMatch(/^record 700: .* \(against the checkpoint of 1280 records\)/);
    const checked = runCli(
      ['audit', 'verify-proof', join(out, '700.tlog-proof'), join(out, '700.entry'), '--vkey', vkeyFile],
      env,
    );
    expect(checked.stdout).toMatch(/^proof verified: the entry is leaf 699 \(record 700\)/);
    // A changed entry is named as the archive is read.
    const path = join(archive, 'tile/entries/002');
    const original = readFileSync(path);
    const bytes = Buffer.from(original);
    bytes[100] = (bytes[100] as number) ^ 1;
    writeFileSync(path, bytes);
    const refused = runCli(
      ['audit', 'query', '--archive', archive, '--vkey', vkeyFile, '--request-id', 'req-700'],
      env,
    );
    writeFileSync(path, original);
    expect(refused.stderr).toMatch(/tile\/entries\/002: entry \d+ is not the leaf tile\/0\/002 holds/);
    expect(refused.status).toBe(1);
  });

  it.skipIf(skipWithoutGoReference)(
    'is read by Go’s tlog.TileHashReader against its checkpoint; every entry hashes to its leaf',
    () => {
      const bad = join(dir, 'bad-archive');
      rmSync(bad, { recursive: true, force: true });
      cpSync(archive, bad, { recursive: true });
      const tile = readFileSync(join(bad, 'tile/0/001'));
      tile[40] = (tile[40] as number) ^ 1;
      writeFileSync(join(bad, 'tile/0/001'), tile);
      expect(goChecks([`tiles ${vkeyFile} ${archive}`, `tiles ${vkeyFile} ${bad}`])).toEqual([
        'ok',
        expect.stringMatching(/^fail: /),
      ]);
    },
  );

  it('verify --archive names a changed entry bundle, a changed tile, a removed file and an added one', () => {
    for (const [file, named] of [
      [
        'tile/entries/001',
        /BROKEN: the entries do not make the root the checkpoint signs: tile\/entries\/001 changed/,
      ],
      ['tile/0/002', /BROKEN: hash tiles that do not hold what the entries make: tile\/0\/002 changed/],
      [
        'tile/1/000.p/3',
        /BROKEN: hash tiles that do not hold what the entries make: tile\/1\/000.p\/3 changed/,
      ],
    ] as const) {
      const path = join(archive, file);
      const original = readFileSync(path);
      const bytes = Buffer.from(original);
      bytes[10] = (bytes[10] as number) ^ 1;
      writeFileSync(path, bytes);
      const result = verifyArchive();
      writeFileSync(path, original);
      expect(result.stdout).toMatch(named);
      expect(result.status).toBe(1);
    }
    expect(verifyArchive().status).toBe(0);
    const removed = join(archive, 'tile/0/003');
    const kept = readFileSync(removed);
    unlinkSync(removed);
    expect(verifyArchive().stdout).toMatch(/BROKEN: missing: tile\/0\/003/);
    writeFileSync(removed, kept);
    writeFileSync(join(archive, 'tile/entries/009'), 'x');
    expect(verifyArchive().stdout).toMatch(/BROKEN: not part of the archive \(added\): tile\/entries\/009/);
    unlinkSync(join(archive, 'tile/entries/009'));
    expect(verifyArchive().status).toBe(0);
  });
});
