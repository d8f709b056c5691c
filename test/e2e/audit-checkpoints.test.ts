import { generateKeyPairSync, sign } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointPathOf } from '../../src/adapters/jsonl/audit-log.js';
import { AUDIT_COLUMNS, linkRecords, rowValuesOf } from '../../src/adapters/shared/audit-chain.js';
import { type AuditCheckpoint, signCheckpoint } from '../../src/domain/audit/checkpoint.js';
import type { StoredAuditRecord } from '../../src/domain/audit/record.js';
import { prepareServe, runCli, type ServeSetup, serveReadsThenStop, startServe } from '../support/cli.js';
import { httpsRequest } from '../support/https-client.js';
import { testSchema } from '../support/postgres.js';
import { execOn, openSqlite } from '../support/sqlite.js';

/**
 * Signed audit checkpoints (decisions §9), tried as someone with write access to the audit
 * store would, on each audit store kind: `serve` answers requests with AUDIT_SIGNING_KEY
 * set, its log is kept apart, and then the trail is cut short, rewritten (every later hash
 * recomputed), stripped of its stored checkpoints, given forged ones, or left alone.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-checkpoints-'));
const keyDir = join(dir, 'keys');
const publicKey = join(keyDir, 'audit-signing-key.pub.pem');
const schema = testSchema('checkpoints');
let setup: ServeSetup;

beforeAll(() => {
  setup = prepareServe(dir);
  setup.cli('audit', 'keygen', '--dir', keyDir);
}, 60_000);

afterAll(async () => {
  await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `serve` on `auditStore` with checkpoints every `every` records, sends `requests` requests, stops it; its log. */
async function serveAndStop(
  auditStore: string,
  {
    requests = 12,
    every = 5,
    extraEnv = {},
  }: { requests?: number; every?: number; extraEnv?: Record<string, string> } = {},
): Promise<string> {
  return serveReadsThenStop(
    setup,
    {
      ...setup.env,
      AUDIT_STORE: auditStore,
      AUDIT_SIGNING_KEY: join(keyDir, 'audit-signing-key.pem'),
      AUDIT_CHECKPOINT_RECORDS: String(every),
      ...extraEnv,
    },
    requests,
  );
}

interface Verdict {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function verify(auditStore: string, ...args: string[]): Verdict {
  return runCli(['audit', 'verify', '--audit-store', auditStore, ...args], setup.env);
}

function storedCheckpoints(auditStore: string): AuditCheckpoint[] {
  const result = runCli(['audit', 'checkpoints', '--json', '--audit-store', auditStore], setup.env);
  expect(result.status, result.stderr).toBe(0);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditCheckpoint);
}

function records(auditStore: string): StoredAuditRecord[] {
  const result = runCli(
    ['audit', 'query', '--json', '--limit', '1000000', '--audit-store', auditStore],
    setup.env,
  );
  expect(result.status, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as (StoredAuditRecord & { at: string })[]).map((r) => ({
    ...r,
    at: new Date(r.at),
  }));
}

/** What someone with write access to one kind of audit store can do to it. */
interface Tamperer {
  readonly url: string;
  /** Replaces the records from `seq` on with `replacement` (already linked). */
  replaceFrom(seq: number, replacement: readonly StoredAuditRecord[]): Promise<void>;
  clearCheckpoints(): Promise<void>;
  /** Adds a checkpoint row as the store keeps it. */
  addCheckpoint(checkpoint: AuditCheckpoint): Promise<void>;
  snapshot(): Promise<void>;
  restore(): Promise<void>;
}

function sqliteTamperer(): Tamperer {
  const path = join(dir, 'audit-tamper.db');
  const insert = (records: readonly StoredAuditRecord[]) => {
    const db = openSqlite(path);
    try {
      const statement = db.prepare(
        `INSERT INTO audit (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`,
      );
      for (const r of records) statement.run(...rowValuesOf(r));
    } finally {
      db.close();
    }
  };
  return {
    url: `sqlite:${path}`,
    replaceFrom: async (seq, replacement) => {
      execOn(path, `DELETE FROM audit WHERE seq >= ${seq}`);
      insert(replacement);
    },
    clearCheckpoints: async () => execOn(path, 'DELETE FROM audit_checkpoints'),
    addCheckpoint: async (c) =>
      execOn(
        path,
        `INSERT INTO audit_checkpoints (seq, head, time, key_id, signature) VALUES (${c.seq}, '${c.head}', '${c.time}', '${c.keyId}', '${c.signature}')`,
      ),
    snapshot: async () => copyFileSync(path, `${path}.snapshot`),
    restore: async () => {
      for (const extra of ['-wal', '-shm']) rmSync(`${path}${extra}`, { force: true });
      copyFileSync(`${path}.snapshot`, path);
    },
  };
}

function jsonlTamperer(): Tamperer {
  const path = join(dir, 'audit-tamper.jsonl');
  const lineOf = (r: StoredAuditRecord) => JSON.stringify({ ...r, at: r.at.toISOString() });
  return {
    url: `jsonl:${path}`,
    replaceFrom: async (seq, replacement) => {
      const kept = readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .filter((line) => (JSON.parse(line) as { seq: number }).seq < seq);
      writeFileSync(path, [...kept, ...replacement.map(lineOf)].map((l) => `${l}\n`).join(''));
    },
    clearCheckpoints: async () => rmSync(checkpointPathOf(path), { force: true }),
    addCheckpoint: async (c) =>
      writeFileSync(checkpointPathOf(path), `${JSON.stringify(c)}\n`, { flag: 'a' }),
    snapshot: async () => {
      copyFileSync(path, `${path}.snapshot`);
      copyFileSync(checkpointPathOf(path), `${checkpointPathOf(path)}.snapshot`);
    },
    restore: async () => {
      copyFileSync(`${path}.snapshot`, path);
      copyFileSync(`${checkpointPathOf(path)}.snapshot`, checkpointPathOf(path));
    },
  };
}

function postgresTamperer(): Tamperer {
  const q = schema.query;
  return {
    url: schema.url,
    replaceFrom: async (seq, replacement) => {
      await q(`DELETE FROM audit WHERE seq >= ${seq}`);
      for (const r of replacement) {
        await q(
          `INSERT INTO audit (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
          rowValuesOf(r),
        );
      }
      // Whoever rewrites the trail moves its head too, so the service carries on from it.
      await q(
        `UPDATE audit_head SET seq = s.seq, hash = s.hash FROM (SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1) s`,
      );
    },
    clearCheckpoints: async () => {
      await q('DELETE FROM audit_checkpoints');
    },
    addCheckpoint: async (c) => {
      await q(
        'INSERT INTO audit_checkpoints (seq, head, time, key_id, signature) VALUES ($1, $2, $3, $4, $5)',
        [c.seq, c.head, c.time, c.keyId, c.signature],
      );
    },
    snapshot: async () => {
      await q(
        'CREATE TABLE audit_snap AS TABLE audit; CREATE TABLE checkpoints_snap AS TABLE audit_checkpoints; CREATE TABLE head_snap AS TABLE audit_head',
      );
    },
    restore: async () => {
      await q(`TRUNCATE audit, audit_checkpoints, audit_head;
        INSERT INTO audit SELECT * FROM audit_snap;
        INSERT INTO audit_checkpoints SELECT * FROM checkpoints_snap;
        INSERT INTO audit_head SELECT * FROM head_snap`);
    },
  };
}

/** A key pair not the service's, as a signer: what a forger holds. */
async function otherKey() {
  const { privateKey, publicKey: pub } = generateKeyPairSync('ed25519');
  return {
    keyId: await calculateJwkThumbprint(pub.export({ format: 'jwk' }) as JWK, 'sha256'),
    sign: (text: string) => sign(null, Buffer.from(text), privateKey).toString('base64url'),
  };
}

describe.each([
  ['SQLite', sqliteTamperer],
  ['JSONL', jsonlTamperer],
  ['PostgreSQL', postgresTamperer],
])('signed checkpoints on a %s audit store', (name, make) => {
  const store = make();
  let log: string;
  let checkpoints: AuditCheckpoint[];
  let trail: StoredAuditRecord[];

  beforeAll(async () => {
    const output = await serveAndStop(store.url);
    log = join(dir, `${name}.log`);
    writeFileSync(log, output);
    await store.snapshot();
    checkpoints = storedCheckpoints(store.url);
    trail = records(store.url);
  }, 60_000);

  it('checkpoints are stored and logged: every 5 records and at shutdown, the last at the head', () => {
    expect(trail).toHaveLength(12);
    expect(checkpoints.length).toBeGreaterThanOrEqual(2);
    expect(checkpoints.at(-1)).toMatchObject({ seq: 12, head: trail[11]?.hash });
    const logged = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"msg":"audit checkpoint"'))
      .map((line) => (JSON.parse(line) as { checkpoint: AuditCheckpoint }).checkpoint);
    expect(logged).toEqual(checkpoints);
    for (const c of checkpoints) expect(c.head).toBe(trail[c.seq - 1]?.hash);
  });

  it('(d) untouched: verify with the public key and the log exits 0', async () => {
    await store.restore();
    const result = verify(store.url, '--public-key', publicKey, '--checkpoints', log);
    expect(result.stdout).toMatch(
      new RegExp(
        `audit chain intact: 12 record\\(s\\), ${checkpoints.length} signed checkpoint\\(s\\) verified`,
      ),
    );
    expect(result.stdout).toMatch(/0 record\(s\) after it/);
    expect(result.status).toBe(0);
  });

  it('(a) the last three records deleted: the chain alone passes, the checkpoints do not', async () => {
    await store.restore();
    await store.replaceFrom(10, []);
    // What the issue saw: the hash chain alone cannot tell.
    expect(verify(store.url).stdout).toMatch(/audit chain intact: 9 record\(s\)/);
    const first = checkpoints.find((c) => c.seq > 9);
    for (const args of [[], ['--checkpoints', log]]) {
      const result = verify(store.url, '--public-key', publicKey, ...args);
      expect(result.stdout).toContain(
        `BROKEN at record 10: records missing after seq 9: the checkpoint at seq ${first?.seq} (${first?.time}`,
      );
      expect(result.status).toBe(1);
    }
  });

  it('(b) a record changed and every later hash recomputed: exit 1 naming the checkpoint', async () => {
    await store.restore();
    const changed = trail.slice(3).map((r, i) => (i === 0 ? { ...r, status: 404 } : r));
    const relinked = linkRecords(changed, { seq: 3, hash: trail[2]?.hash ?? '' }).stored;
    await store.replaceFrom(4, relinked);
    expect(verify(store.url).stdout).toMatch(/audit chain intact: 12 record\(s\)/);
    const first = checkpoints.find((c) => c.seq >= 4);
    const result = verify(store.url, '--public-key', publicKey, '--checkpoints', log);
    expect(result.stdout).toContain(`chain differs from checkpoint at seq ${first?.seq}`);
    expect(result.status).toBe(1);
  });

  it('(c) the stored checkpoints deleted too: still found from the log copy', async () => {
    await store.restore();
    await store.replaceFrom(10, []);
    await store.clearCheckpoints();
    const withoutLog = verify(store.url, '--public-key', publicKey);
    expect(withoutLog.stdout).toMatch(/MISSING: no checkpoint was found/);
    expect(withoutLog.status).toBe(1);
    const result = verify(store.url, '--public-key', publicKey, '--checkpoints', log);
    const first = checkpoints.find((c) => c.seq > 9);
    expect(result.stdout).toContain(`records missing after seq 9: the checkpoint at seq ${first?.seq}`);
    expect(result.stdout).toContain(
      `${checkpoints.length} checkpoint(s) from --checkpoints are not in the store`,
    );
    expect(result.status).toBe(1);
  });

  it('a rewritten trail with checkpoints signed by another key is refused', async () => {
    await store.restore();
    const changed = trail.slice(3).map((r, i) => (i === 0 ? { ...r, status: 404 } : r));
    const { stored, head } = linkRecords(changed, { seq: 3, hash: trail[2]?.hash ?? '' });
    await store.replaceFrom(4, stored);
    await store.clearCheckpoints();
    const forger = await otherKey();
    const realKeyId = checkpoints[0]?.keyId ?? '';
    const time = new Date();
    // Claiming the service's key id: the signature does not verify with its public key.
    await store.addCheckpoint(signCheckpoint(head, time, { ...forger, keyId: realKeyId }));
    const claimed = verify(store.url, '--public-key', publicKey);
    expect(claimed.stdout).toMatch(/REFUSED: the checkpoint at seq 12 .* does not verify with its key/);
    expect(claimed.status).toBe(1);
    // Under its own key id: no public key given for it.
    await store.clearCheckpoints();
    await store.addCheckpoint(signCheckpoint(head, time, forger));
    const own = verify(store.url, '--public-key', publicKey);
    expect(own.stdout).toContain(`signed by key ${forger.keyId}, which no --public-key gives`);
    expect(own.status).toBe(1);
  });
});

describe('two instances on one PostgreSQL trail', () => {
  const shared = testSchema('checkpoints_two');
  afterAll(() => shared.drop());

  it('both checkpoint: one chain, every checkpoint consistent with it', async () => {
    const env = {
      ...setup.env,
      AUDIT_STORE: shared.url,
      AUDIT_SIGNING_KEY: join(keyDir, 'audit-signing-key.pem'),
      AUDIT_CHECKPOINT_RECORDS: '4',
    };
    const a = await startServe(env);
    const b = await startServe(env);
    const ask = (url: string) =>
      httpsRequest(`${url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
        ca: setup.ca,
        ...setup.client,
        headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
      });
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all([a, b, a, b, a, b].map((s) => ask(s.url)));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    }
    // Then each alone appends four records, enough to start a checkpoint of its own at a head
    // the other has not signed. (Above, an instance may find every head it looked at already
    // signed by the other, and rightly sign nothing: that is how one chain is shared.)
    for (const s of [a, b]) {
      for (let i = 0; i < 4; i++) expect((await ask(s.url)).status).toBe(200);
      for (let waited = 0; !s.output().includes('"msg":"audit checkpoint"'); waited += 50) {
        if (waited > 20_000) throw new Error(`no checkpoint logged:\n${s.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    for (const s of [a, b]) {
      s.child.kill('SIGTERM');
      await new Promise((resolve) => s.child.once('exit', resolve));
    }
    const logs = [a, b].map((s, i) => {
      const path = join(dir, `two-${i}.log`);
      writeFileSync(path, s.output());
      return path;
    });
    // Each instance took checkpoints of its own.
    for (const path of logs) expect(readFileSync(path, 'utf8')).toContain('"msg":"audit checkpoint"');
    const stored = storedCheckpoints(shared.url);
    const trail = records(shared.url);
    expect(trail.map((r) => r.seq)).toEqual(Array.from({ length: 38 }, (_, i) => i + 1));
    expect(stored.length).toBeGreaterThanOrEqual(4);
    for (const c of stored) expect(c.head).toBe(trail[c.seq - 1]?.hash);
    expect(stored.at(-1)?.seq).toBe(38);
    const result = verify(
      shared.url,
      '--public-key',
      publicKey,
      '--checkpoints',
      logs[0] ?? '',
      '--checkpoints',
      logs[1] ?? '',
    );
    expect(result.stdout).toMatch(/audit chain intact: 38 record\(s\)/);
    expect(result.status).toBe(0);
  }, 60_000);
});

describe('checkpoints off the request path', () => {
  it('a checkpoint the store refuses: requests still answered, logged, counted and retried; metrics show the age', async () => {
    const path = join(dir, 'audit-refusing.db');
    const server = await startServe({
      ...setup.env,
      AUDIT_STORE: `sqlite:${path}`,
      AUDIT_SIGNING_KEY: join(keyDir, 'audit-signing-key.pem'),
      AUDIT_CHECKPOINT_RECORDS: '2',
      AUDIT_CHECKPOINT_SECONDS: '2',
    });
    const metric = async (name: string) => {
      const text = await (await fetch(`${server.managementUrl}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    try {
      // No checkpoint yet: no age to show.
      expect(await metric('case_read_audit_checkpoint_age_seconds')).toBeUndefined();
      execOn(
        path,
        `CREATE TRIGGER refuse BEFORE INSERT ON audit_checkpoints BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
      );
      for (let i = 0; i < 6; i++) {
        const res = await httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
          ca: setup.ca,
          ...setup.client,
          headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
        });
        expect(res.status).toBe(200);
      }
      await expect.poll(() => metric('case_read_audit_checkpoint_failures_total')).toBeGreaterThan(0);
      // The log is written in batches: wait for the line.
      await expect
        .poll(() => server.output(), { timeout: 10_000 })
        .toContain('"reason":"refused by the test","msg":"audit checkpoint failed; it will be tried again"');
      // As of the last check: the retries look again.
      await expect
        .poll(() => metric('case_read_audit_records_after_checkpoint'), { timeout: 10_000 })
        .toBe(6);
      execOn(path, 'DROP TRIGGER refuse');
      await expect
        .poll(() => metric('case_read_audit_records_after_checkpoint'), { timeout: 10_000 })
        .toBe(0);
      expect(await metric('case_read_audit_checkpoint_age_seconds')).toBeLessThan(10);
      expect(await metric('case_read_audit_checkpoints_total')).toBeGreaterThan(1);
      const ready = await fetch(`${server.managementUrl}/health/ready`);
      expect(ready.status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }
    expect(storedCheckpoints(`sqlite:${path}`).at(-1)?.seq).toBe(6);
  }, 60_000);

  it('config check shows the signing key by its id, never the key', () => {
    const keygen = JSON.parse(setup.cli('audit', 'keygen', '--dir', join(dir, 'keys-2'), '--json')) as {
      keyId: string;
      privateKey: string;
    };
    const result = runCli(['config', 'check'], { ...setup.env, AUDIT_SIGNING_KEY: keygen.privateKey });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain(`AUDIT_SIGNING_KEY ${keygen.privateKey} (key id ${keygen.keyId})`);
    expect(result.stdout).not.toContain(readFileSync(keygen.privateKey, 'utf8').split('\n')[1]);
    // A public key where the private one belongs, kept as a key file is kept (0600).
    const notPrivate = join(dir, 'keys-2', 'given-as-signing-key.pem');
    writeFileSync(notPrivate, readFileSync(publicKey), { mode: 0o600 });
    const wrong = runCli(['config', 'check'], { ...setup.env, AUDIT_SIGNING_KEY: notPrivate });
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(`AUDIT_SIGNING_KEY: ${notPrivate}: it holds no private key in PEM`);
  });
});
