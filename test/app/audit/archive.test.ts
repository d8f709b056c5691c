import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
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
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { JsonlAuditLog } from '../../../src/adapters/jsonl/audit-log.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import * as archiving from '../../../src/app/audit/archive.js';
import { archiveDirectory } from '../../../src/app/composition/audit-archive-tiles.js';
import { auditHashes, noteSigner } from '../../../src/app/composition/audit-keys.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { bundlePath, tileIndexPath, tileOfPath, tilePath, tilesOf } from '../../../src/tlog/tiles.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { HELD_ARCHIVE_LOCK } from '../../support/audit.js';
import { runCli } from '../../support/cli.js';
import { withByteFlipped } from '../../support/files.js';
import { goChecks, skipWithoutGoReference } from '../../support/go-reference.js';

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

/** The archive's work on a directory, as the commands call it: the composition root's SHA-256 and directory handed in. */
const writeArchive = (
  log: SqliteAuditLog,
  to: string,
  size: number,
  signer: ReturnType<typeof noteSigner>,
  keys: ReturnType<typeof noteSigner>[],
) => archiving.writeArchive(auditHashes, log, archiveDirectory(to), size, signer, keys, HELD_ARCHIVE_LOCK);
const assertArchiveHolds = (archive: string, from: number, to: number) =>
  archiving.assertArchiveHolds(archiveDirectory(archive), from, to);

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
      ['audit', 'archive', '--to', archive, '--older-than', '0', '--keep-in-store', '--audit-store', store],
      env,
    );
    expect(second.stdout).toMatch(/^archived records 769\.\.1280 to /);
    // Kept in the store (1..768 were let go of by the first): until --let-go-only.
    expect(
      JSON.parse(runCli(['audit', 'query', '--limit', '1', '--json', '--audit-store', store], env).stdout),
    ).toMatchObject([{ seq: 769 }]);
    const letGo = runCli(['audit', 'archive', '--to', archive, '--let-go-only', '--audit-store', store], env);
    expect(letGo.stdout).toMatch(
      /holds records 1\.\.1280, checked against the stored tree\nthe store let go of records 1\.\.1280 \(512 removed now\)/,
    );
    for (const file of ['tile/entries/004', 'tile/0/004', 'tile/1/000.p/5'])
      expect(existsSync(join(archive, file))).toBe(true);
    // The first archive's files are as they were written.
    expect(readFileSync(join(archive, 'tile/1/000.p/3')).equals(partial)).toBe(true);
    const verified = verifyArchive();
    expect(verified.stdout).toMatch(/^audit archive intact: 1280 record\(s\)/);
    expect(verified.status).toBe(0);
  });

  it('refuses a checkpoint file with a byte-order mark before it, as Go refuses those bytes', () => {
    const copy = join(dir, 'archive-bom');
    cpSync(archive, copy, { recursive: true });
    const run = () => runCli(['audit', 'verify', '--archive', copy, '--vkey', vkeyFile], env);
    expect(run().status).toBe(0);
    const checkpoint = join(copy, 'checkpoint');
    const bytes = readFileSync(checkpoint);
    chmodSync(checkpoint, 0o644);
    writeFileSync(checkpoint, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]));
    expect(run().status).not.toBe(0);
    rmSync(copy, { recursive: true, force: true });
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
    const refused = withByteFlipped(join(archive, 'tile/entries/002'), 100, () =>
      runCli(['audit', 'query', '--archive', archive, '--vkey', vkeyFile, '--request-id', 'req-700'], env),
    );
    expect(refused.stderr).toMatch(/tile\/entries\/002: entry \d+ is not the leaf tile\/0\/002 holds/);
    expect(refused.status).toBe(1);
  });

  it('prove --consistency --archive gives the proof only when it makes the signed root: a changed tile is refused', () => {
    const prove = () =>
      runCli(
        ['audit', 'prove', '--consistency', '700', '--archive', archive, '--vkey', vkeyFile, '--json'],
        env,
      );
    const proved = prove();
    expect(proved.stderr).toBe('');
    expect(JSON.parse(proved.stdout)).toMatchObject({ oldSize: 700, newSize: 1280 });
    // Leaf 700 (record 701) is in tile/0/002 at hash 188: its hash is in the proof from 700.
    const refused = withByteFlipped(join(archive, 'tile/0/002'), 188 * 32, prove);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(
      /the archive's tiles do not make the root its checkpoint signs: a file was changed; run case-read audit verify --archive/,
    );
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
      const result = withByteFlipped(join(archive, file), 10, verifyArchive);
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

describe('audit verify --archive, judging each file by its name alone', () => {
  it('names a partial tile of leaves (no archive writes one) and many added files, the first 100 and how many more', () => {
    const partial = join(archive, 'tile/0/004.p/7');
    mkdirSync(join(archive, 'tile/0/004.p'), { recursive: true });
    writeFileSync(partial, readFileSync(join(archive, 'tile/0/004')).subarray(0, 7 * 32));
    expect(verifyArchive().stdout).toMatch(/BROKEN: not part of the archive \(added\): tile\/0\/004\.p\/7$/m);
    rmSync(join(archive, 'tile/0/004.p'), { recursive: true });
    mkdirSync(join(archive, 'junk'));
    for (let i = 0; i < 150; i++) writeFileSync(join(archive, 'junk', String(i).padStart(3, '0')), 'x');
    const verified = verifyArchive();
    expect(verified.stdout).toMatch(
      /BROKEN: not part of the archive \(added\): junk\/000, junk\/001, .*junk\/099 and 50 more$/m,
    );
    expect(verified.stdout).not.toMatch(/junk\/100/);
    rmSync(join(archive, 'junk'), { recursive: true });
    expect(verifyArchive().status).toBe(0);
  });
});

describe('after AUDIT_SIGNING_KEY is rotated', () => {
  it('audit archive opens the checkpoints signed before with --public-key, and says so without it', async () => {
    const rotated = await generateCheckpointKeys();
    const keyFile = join(dir, 'rotated-key.pem');
    writeFileSync(keyFile, rotated.privatePem, { mode: 0o600 });
    const rotatedEnv = { ...env, AUDIT_SIGNING_KEY: keyFile };
    const args = ['audit', 'archive', '--to', archive, '--older-than', '0', '--audit-store', store];
    const refused = runCli(args, rotatedEnv);
    expect(refused.stderr).toMatch(
      /no signature on the note is by a key given \(signed before AUDIT_SIGNING_KEY was rotated\? give that key's public half with --public-key\)/,
    );
    expect(refused.status).toBe(1);
    const accepted = runCli([...args, '--public-key', publicKeyFile], rotatedEnv);
    expect(accepted.stderr).toBe('');
    expect(accepted.stdout).toMatch(/^nothing to archive: .* holds records 1\.\.1280 already/);
  });
});

describe('what audit archive refuses', () => {
  const keysOf = async () => {
    const keys = await generateCheckpointKeys();
    return {
      checkpoint: await checkpointSigner(keys.privatePem, ORIGIN),
      note: noteSigner(keys.privatePem, ORIGIN),
    };
  };
  /** A SQLite trail of `count` records from `first` on, grown and signed. */
  const trail = async (
    name: string,
    first: number,
    count: number,
    signer: Awaited<ReturnType<typeof keysOf>>,
  ) => {
    const log = SqliteAuditLog.open(join(dir, name));
    for (let i = first; i < first + count; i++) void log.append(auditRecord(i));
    await log.flush();
    const grown = await log.growTree();
    await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer.checkpoint, grown.root));
    return log;
  };

  it('AUDIT_SIGNING_KEY readable by others: nothing is written, the key named with its mode', () => {
    const exposed = join(dir, 'exposed-signing-key.pem');
    writeFileSync(exposed, readFileSync(env.AUDIT_SIGNING_KEY as string), { mode: 0o644 });
    chmodSync(exposed, 0o644);
    const to = join(dir, 'archive-exposed-key');
    const result = runCli(['audit', 'archive', '--to', to, '--older-than', '0', '--audit-store', store], {
      ...env,
      AUDIT_SIGNING_KEY: exposed,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`AUDIT_SIGNING_KEY: ${exposed} is readable by others (mode 0644)`);
    expect(existsSync(to)).toBe(false);
  });

  it("another trail's archive, signed by the same key: nothing is written, nothing let go of", async () => {
    const signer = await keysOf();
    const one = await trail('one.db', 1, 300, signer);
    const other = await trail('other.db', 5001, 300, signer);
    const target = join(dir, 'one-archive');
    try {
      await writeArchive(one, target, 256, signer.note, [signer.note]);
      await expect(writeArchive(other, target, 256, signer.note, [signer.note])).rejects.toThrow(
        /is not an archive of this trail: the tree of its 256 records is not the stored one/,
      );
      expect((await other.query({ limit: 1 }))[0]?.seq).toBe(1);
    } finally {
      one.close();
      other.close();
    }
  });

  it('a store whose newest checkpoint is not signed by the key: nothing is written', async () => {
    const signer = await keysOf();
    const stranger = await keysOf();
    const log = await trail('strange.db', 1, 300, stranger);
    const target = join(dir, 'strange-archive');
    try {
      await expect(writeArchive(log, target, 256, signer.note, [signer.note])).rejects.toThrow(
        /the newest stored checkpoint \(300 records\)/,
      );
      expect(existsSync(target)).toBe(false);
    } finally {
      log.close();
    }
  });

  it('a bundle removed from the archive keeps its records in the store', async () => {
    const target = join(dir, 'one-archive');
    // Asynchronous since the archive is behind a port (ArchiveTiles): the same outcomes, awaited.
    await expect(assertArchiveHolds(target, 0, 256)).resolves.not.toThrow();
    unlinkSync(join(target, bundlePath(0)));
    await expect(assertArchiveHolds(target, 0, 256)).rejects.toThrow(
      /lacks tile\/entries\/000: the store keeps those records/,
    );
  });

  it('a JSONL store, with a message that says where a trail kept for years belongs', async () => {
    const path = join(dir, 'trail.jsonl');
    const log = JsonlAuditLog.open(path, { mode: 'write' });
    await log.append(auditRecord(1));
    await log.close();
    const refused = runCli(
      [
        'audit',
        'archive',
        '--to',
        join(dir, 'jsonl-archive'),
        '--older-than',
        '0',
        '--audit-store',
        `jsonl:${path}`,
      ],
      env,
    );
    expect(refused.stderr).toMatch(
      /this audit store does not archive: a JSONL file keeps every record; .*SQLite or PostgreSQL/,
    );
    expect(refused.status).toBe(1);
    expect(existsSync(join(dir, 'jsonl-archive'))).toBe(false);
  });
});
