import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { postgresStores } from '../../../src/adapters/postgres/store-kind.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import type { AuditLog } from '../../../src/ports/audit-log.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { BIN, type CliResult, ROOT, runCli } from '../../support/cli.js';
import { testSchema } from '../../support/postgres.js';
import { CURRENT } from '../../support/runtimes.js';
import { testContext } from '../../support/stores.js';

/**
 * Two `audit archive` runs of one trail at once (decisions §18), as `kubectl create job
 * --from=cronjob` beside the CronJob's own makes them: a smaller and a larger, started
 * together, round after round, on SQLite and on PostgreSQL. One works; the other is refused
 * (exit 75, naming the run that holds the lock) or runs after it. The archive's checkpoint
 * never shrinks, the store holds every record it does not cover, and both verify.
 */

const ORIGIN = 'case-read.test.example/audit';
const TILES = 80;
const ROUNDS = 8;
const dir = mkdtempSync(join(tmpdir(), 'case-read-archive-concurrent-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The CLI run in the background, its output collected. */
function started(args: string[], env: Record<string, string>): Promise<CliResult> {
  const child = spawn(CURRENT.command, [...CURRENT.args, BIN, ...args], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

const kinds: {
  readonly name: string;
  readonly store: () => Promise<{
    url: string;
    open: () => Promise<AuditLog & { close?: () => void }>;
    drop: () => Promise<void>;
  }>;
}[] = [
  {
    name: 'sqlite',
    store: async () => {
      const path = join(dir, 'audit.db');
      return { url: `sqlite:${path}`, open: async () => SqliteAuditLog.open(path), drop: async () => {} };
    },
  },
  {
    name: 'postgres',
    store: async () => {
      const schema = testSchema('archive_concurrent');
      const closers: (() => Promise<void>)[] = [];
      return {
        url: schema.url,
        open: async () => {
          const opened = await postgresStores.audit?.open(schema.url, testContext, { create: true });
          if (!opened) throw new Error('postgres cannot hold the audit trail');
          closers.push(() => opened.close());
          return opened.value;
        },
        drop: async () => {
          for (const close of closers) await close();
          await schema.drop();
        },
      };
    },
  },
];

describe.each(kinds)('two audit archive runs of one trail at once, on $name', ({ name, store }) => {
  it(`one works, the other is refused or waits; the checkpoint never shrinks, nothing uncovered is let go of (${ROUNDS} rounds)`, async () => {
    const trail = await store();
    try {
      const keys = await generateCheckpointKeys();
      const keyFile = join(dir, `${name}-key.pem`);
      writeFileSync(keyFile, keys.privatePem, { mode: 0o600 });
      const env = { PATH: process.env.PATH ?? '', AUDIT_SIGNING_KEY: keyFile, AUDIT_ORIGIN: ORIGIN };
      const log = await trail.open();
      for (let i = 1; i <= TILES * 256; i++) void log.append(auditRecord(i));
      await log.flush();
      const grown = await log.growTree();
      const signer = await checkpointSigner(keys.privatePem, ORIGIN);
      await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
      // Records after the checkpoint: never archived, always held.
      for (let i = TILES * 256 + 1; i <= TILES * 256 + 100; i++) await log.append(auditRecord(i));
      log.close?.();
      const vkey = join(dir, `${name}.vkey`);
      writeFileSync(vkey, runCli(['audit', 'vkey'], env).stdout);
      const archive = join(dir, `${name}-archive`);
      const archived = () => {
        try {
          return Number(readFileSync(join(archive, 'checkpoint'), 'utf8').split('\n')[1]);
        } catch {
          return 0;
        }
      };
      const run = (records: number) =>
        started(
          [
            'audit',
            'archive',
            '--to',
            archive,
            '--before',
            auditRecord(records + 1).at.toISOString(),
            '--audit-store',
            trail.url,
          ],
          env,
        );
      let refused = 0;
      let size = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        // The larger first or the smaller first, by turns: a smaller that ran last would have shrunk it.
        const larger = round * (TILES / ROUNDS) * 256;
        const smaller = larger - 3 * 256;
        const [a, b] = await Promise.all(
          round % 2 ? [run(larger), run(smaller)] : [run(smaller), run(larger)],
        );
        for (const result of [a, b]) {
          if (result.status === 75) {
            refused++;
            expect(result.stderr).toMatch(
              /^case-read: another archive of this trail is running \(\S+ pid \d+.*, since \d{4}-\d\d-\d\dT[^)]*\): this run wrote nothing and let go of nothing/,
            );
          } else {
            expect([result.status, result.stderr]).toEqual([0, '']);
          }
        }
        // Never smaller; and the larger ran, or the run that ran after the other saw its work.
        const now = archived();
        expect(now).toBeGreaterThanOrEqual(size);
        size = now;
        const held = JSON.parse(
          runCli(['audit', 'query', '--limit', '1', '--json', '--audit-store', trail.url], env).stdout,
        ) as { seq: number }[];
        // The store lets go only of what the archive's checkpoint covers: it holds the next record.
        expect(held[0]?.seq).toBeLessThanOrEqual(size + 1);
        expect(runCli(['audit', 'verify', '--archive', archive, '--vkey', vkey], env).status).toBe(0);
        expect(runCli(['audit', 'verify', '--audit-store', trail.url], env).status).toBe(0);
      }
      // The runs met: at least one was refused.
      expect(refused).toBeGreaterThan(0);
    } finally {
      await trail.drop();
    }
  }, 240_000);
});
