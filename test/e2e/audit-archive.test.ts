import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundlePath, entriesOf, tilePath } from '../../src/tlog/tiles.js';
import { prepareServe, runCli, runCliConcurrently, type ServeSetup, startServe } from '../support/cli.js';
import { withByteFlipped } from '../support/files.js';
import { goChecks, skipWithoutGoReference } from '../support/go-reference.js';
import { consumerAgent, httpsRequest } from '../support/https-client.js';
import { testSchema } from '../support/postgres.js';
import { execOn } from '../support/sqlite.js';

/**
 * The archive of decisions §15 end to end: 20,000 records written through `serve`, the older
 * half archived while `serve` keeps answering under load, then the archive read by Go's
 * sumdb/tlog (TileHashReader against its signed checkpoint; each entry's RecordHash is its
 * level-0 tile hash), the store smaller on disk, `audit verify` from the boundary and
 * `audit verify --archive` passing, an archived request found and proved from the archive,
 * and one changed byte in a bundle or a tile named.
 */

const ORIGIN = 'case-read.test.example/audit';
const RECORDS = 20_000;
const dir = mkdtempSync(join(tmpdir(), 'case-read-archive-e2e-'));
const archive = join(dir, 'archive');
const dbFile = join(dir, 'audit.db');
let setup: ServeSetup;
let env: Record<string, string>;
let vkeyFile: string;

beforeAll(() => {
  setup = prepareServe(dir);
  setup.cli('audit', 'keygen', '--dir', join(dir, 'keys'));
  env = {
    ...setup.env,
    AUDIT_SIGNING_KEY: join(dir, 'keys', 'audit-signing-key.pem'),
    AUDIT_ORIGIN: ORIGIN,
    AUDIT_CHECKPOINT_RECORDS: '1000',
    // This test's load is one client's: its quota is not what is tested here.
    RATE_LIMIT_DEFAULT: '100000/1s',
  };
  vkeyFile = join(dir, 'audit.vkey');
  writeFileSync(vkeyFile, runCli(['audit', 'vkey'], env).stdout);
}, 60_000);
const schema = testSchema('archive');
afterAll(async () => {
  await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** The audit store's file, with what its WAL held written into it first. */
function bytesOnDisk(): number {
  execOn(dbFile, 'PRAGMA wal_checkpoint(TRUNCATE)');
  return statSync(dbFile).size;
}

type Server = Awaited<ReturnType<typeof startServe>>;

async function stop(server: Server): Promise<void> {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
}

/** Sends requests on 8 keep-alive connections until `count` were sent or `until` resolves; every answer must be 200. */
async function load(server: Server, count: number, until?: Promise<unknown>): Promise<number> {
  const agent = consumerAgent({ maxSockets: 8 });
  let sent = 0;
  let done = false;
  void until?.then(() => {
    done = true;
  });
  const statuses = new Map<number, number>();
  const worker = async () => {
    while (!done && sent < count) {
      sent++;
      const res = await httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
        ca: setup.ca,
        ...setup.client,
        agent,
        headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
      });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  agent.destroy();
  expect(Object.fromEntries(statuses)).toEqual({ 200: sent });
  return sent;
}

describe('an archive of the older half, taken while serve answers under load', () => {
  let sizeBefore: number;
  let cutoff: string;
  let archived: { from: number; to: number; forgotten: { upTo: number; records: number } };
  let duringArchive: number;

  beforeAll(async () => {
    // Each server is stopped whatever happens: a failed run leaves none behind.
    const server = await startServe({ ...env, AUDIT_STORE: `sqlite:${dbFile}` });
    try {
      await load(server, RECORDS / 2);
      cutoff = new Date().toISOString();
      await load(server, RECORDS / 2);
    } finally {
      await stop(server);
    }
    sizeBefore = bytesOnDisk();

    const again = await startServe({ ...env, AUDIT_STORE: `sqlite:${dbFile}` });
    try {
      const archiving = runCliConcurrently(
        [
          'audit',
          'archive',
          '--to',
          archive,
          '--before',
          cutoff,
          '--audit-store',
          `sqlite:${dbFile}`,
          '--json',
        ],
        env,
      );
      duringArchive = await load(again, 1_000_000, archiving);
      const result = await archiving;
      expect(result.stderr).toBe('');
      archived = JSON.parse(result.stdout);
    } finally {
      await stop(again);
    }
  }, 300_000);

  it('archives whole tiles of the records before the cutoff, and serve answered every request meanwhile', () => {
    // The first 10,000 were stored before the cutoff: 39 whole tiles of them.
    expect(archived).toMatchObject({ from: 0, to: 9984, forgotten: { upTo: 9984, records: 9984 } });
    expect(duringArchive).toBeGreaterThan(0);
    for (const file of ['checkpoint', bundlePath(38), tilePath({ level: 0, index: 38, width: 256 })]) {
      expect(existsSync(join(archive, file))).toBe(true);
    }
    expect(existsSync(join(archive, bundlePath(39)))).toBe(false);
    expect(readFileSync(join(archive, 'checkpoint'), 'utf8')).toMatch(new RegExp(`^${ORIGIN}\\n9984\\n`));
  });

  it('leaves the store smaller on disk by at least 40%, holding none of the archived records', () => {
    // The records serve wrote while the archive ran are held too, as many as the machine had
    // time for: each may take what a record took before, and no more.
    const perRecord = sizeBefore / RECORDS;
    expect(bytesOnDisk()).toBeLessThanOrEqual(sizeBefore * 0.6 + duringArchive * perRecord);
    const held = runCli(
      ['audit', 'query', '--audit-store', `sqlite:${dbFile}`, '--limit', '1', '--json'],
      env,
    );
    expect(JSON.parse(held.stdout)).toMatchObject([{ seq: 9985 }]);
  });

  it.skipIf(skipWithoutGoReference)(
    'is read by Go’s tlog.TileHashReader against its checkpoint; every entry’s RecordHash is its level-0 tile hash',
    () => {
      expect(goChecks([`tiles ${vkeyFile} ${archive}`])).toEqual(['ok']);
    },
  );

  it('audit verify passes from the boundary, and verify --archive passes', () => {
    const store = runCli(
      [
        'audit',
        'verify',
        '--audit-store',
        `sqlite:${dbFile}`,
        '--public-key',
        join(dir, 'keys', 'audit-signing-key.pub.pem'),
      ],
      env,
    );
    expect(store.stdout).toMatch(/^audit chain intact: \d+ record\(s\), \d+ signed checkpoint\(s\) verified/);
    expect(store.stdout).toMatch(/records 1\.\.9984 were archived and let go of: the walk began at 9985/);
    expect(store.status).toBe(0);
    const whole = runCli(['audit', 'verify', '--archive', archive, '--vkey', vkeyFile], env);
    expect(whole.stdout).toMatch(/^audit archive intact: 9984 record\(s\)/);
    expect(whole.status).toBe(0);
  });

  it('finds an archived request with audit query --archive and proves it with audit prove --archive', () => {
    // Record 4322 is entry 225 of bundle 16: [4, seq, previous hash, at, request id, …].
    const entry = entriesOf(new Uint8Array(readFileSync(join(archive, bundlePath(16)))))?.[225] as Uint8Array;
    const [, seq, , , requestId] = JSON.parse(new TextDecoder().decode(entry));
    expect(seq).toBe(4322);
    const record = { requestId };
    const found = runCli(
      [
        'audit',
        'query',
        '--archive',
        archive,
        '--vkey',
        vkeyFile,
        '--request-id',
        record.requestId,
        '--json',
      ],
      env,
    );
    expect(JSON.parse(found.stdout)).toMatchObject([
      { seq: 4322, requestId: record.requestId, operation: 'getCase', crn: 'X123456', status: 200 },
    ]);
    // Not in the store any more.
    expect(
      runCli(['audit', 'query', '--audit-store', `sqlite:${dbFile}`, '--request-id', record.requestId], env)
        .stdout,
    ).toBe('no records\n');
    const out = join(dir, 'proofs');
    const proved = runCli(
      ['audit', 'prove', record.requestId, '--archive', archive, '--vkey', vkeyFile, '--out', out],
      env,
    );
    expect(proved.stdout).toMatch(/^record 4322: .*against the checkpoint of 9984 records/);
    const checked = runCli(
      ['audit', 'verify-proof', join(out, '4322.tlog-proof'), join(out, '4322.entry'), '--vkey', vkeyFile],
      env,
    );
    expect(checked.status).toBe(0);
  });

  it('names an entry bundle or a tile with one changed byte', () => {
    for (const [file, named] of [
      [bundlePath(7), /tile\/entries\/007 changed/],
      [tilePath({ level: 0, index: 21, width: 256 }), /tile\/0\/021 changed/],
    ] as const) {
      const result = withByteFlipped(join(archive, file), 1000, () =>
        runCli(['audit', 'verify', '--archive', archive, '--vkey', vkeyFile], env),
      );
      expect(result.stdout).toMatch(named);
      expect(result.status).toBe(1);
    }
  });
});

describe('on PostgreSQL, archived while two instances answer under load', () => {
  const pgArchive = join(dir, 'pg-archive');
  let answered = 0;
  let archivedTo = 0;

  beforeAll(async () => {
    const pgEnv = { ...env, AUDIT_STORE: schema.url, AUDIT_CHECKPOINT_RECORDS: '500' };
    const first = await startServe(pgEnv);
    const second = await startServe(pgEnv);
    try {
      answered += (await Promise.all([load(first, 1500), load(second, 1500)])).reduce((a, b) => a + b, 0);
      const archiving = runCliConcurrently(
        ['audit', 'archive', '--to', pgArchive, '--older-than', '0', '--audit-store', schema.url, '--json'],
        env,
      );
      answered += (
        await Promise.all([load(first, 1_000_000, archiving), load(second, 1_000_000, archiving)])
      ).reduce((a, b) => a + b, 0);
      const result = await archiving;
      expect(result.stderr).toBe('');
      archivedTo = JSON.parse(result.stdout).forgotten.upTo;
    } finally {
      await stop(first);
      await stop(second);
    }
  }, 300_000);

  it('loses and doubles nothing: one record for every answer, the chain whole from the boundary', async () => {
    // Every record before the archive ran was covered (3,000, less the tiles' remainder).
    expect(archivedTo).toBeGreaterThanOrEqual(2560);
    expect(archivedTo % 256).toBe(0);
    const { rows } = await schema.query('SELECT seq FROM audit_head');
    expect(Number(rows[0]?.seq)).toBe(answered);
    const held = await schema.query('SELECT count(*) AS n, min(seq) AS first FROM audit');
    expect(Number(held.rows[0]?.n)).toBe(answered - archivedTo);
    expect(Number(held.rows[0]?.first)).toBe(archivedTo + 1);
    const verified = runCli(
      [
        'audit',
        'verify',
        '--audit-store',
        schema.url,
        '--public-key',
        join(dir, 'keys', 'audit-signing-key.pub.pem'),
      ],
      env,
    );
    expect(verified.stdout).toMatch(
      new RegExp(`^audit chain intact: ${answered - archivedTo} record\\(s\\)`),
    );
    expect(verified.status).toBe(0);
    const archived = runCli(['audit', 'verify', '--archive', pgArchive, '--vkey', vkeyFile], env);
    expect(archived.stdout).toMatch(new RegExp(`^audit archive intact: ${archivedTo} record\\(s\\)`));
  });
});
