import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, runCli, type ServeSetup, serveReadsThenStop } from '../support/cli.js';
import { goChecks, skipWithoutGoReference } from '../support/go-reference.js';
import { testSchema } from '../support/postgres.js';
import { execOn } from '../support/sqlite.js';

/**
 * The audit trail as a verifiable log (decisions §14), end to end on each audit store: a
 * trail built through `serve`, its checkpoints, inclusion and consistency proofs handed out
 * by `audit checkpoint` and `audit prove`, and checked by someone else's verifier, Go's
 * golang.org/x/mod/sumdb/note and sumdb/tlog. One changed byte of an entry, a proof hash or a
 * note's body fails each check; `audit verify --since` checks the trail from a saved checkpoint.
 */

const ORIGIN = 'case-read.test.example/audit';
const dir = mkdtempSync(join(tmpdir(), 'case-read-c2sp-e2e-'));
const keyDir = join(dir, 'keys');
const schema = testSchema('c2sp');
let setup: ServeSetup;
let env: Record<string, string>;

beforeAll(() => {
  setup = prepareServe(dir);
  setup.cli('audit', 'keygen', '--dir', keyDir);
  env = { ...setup.env, AUDIT_SIGNING_KEY: join(keyDir, 'audit-signing-key.pem'), AUDIT_ORIGIN: ORIGIN };
}, 60_000);

afterAll(async () => {
  await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `serve` on `auditStore` (a checkpoint every 5 records and at shutdown), sends `requests` requests, stops it. */
async function serveRequests(auditStore: string, requests: number): Promise<void> {
  await serveReadsThenStop(
    setup,
    { ...env, AUDIT_STORE: auditStore, AUDIT_CHECKPOINT_RECORDS: '5' },
    requests,
  );
}

function cli(auditStore: string, ...args: string[]) {
  const result = runCli([...args, '--audit-store', auditStore], env);
  return { ...result, ok: result.status === 0 };
}

const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const flipByte = (bytes: Uint8Array, at: number) => Uint8Array.from(bytes, (b, i) => (i === at ? b ^ 1 : b));

/** Each store kind: its URL, and how someone with write access changes record 9's status. */
const stores: [string, () => string, (store: string) => Promise<void>][] = [
  [
    'sqlite',
    () => `sqlite:${join(dir, 'c2sp.db')}`,
    async (store) => execOn(store.slice('sqlite:'.length), 'UPDATE audit SET status = 404 WHERE seq = 9'),
  ],
  [
    'jsonl',
    () => `jsonl:${join(dir, 'c2sp.jsonl')}`,
    async (store) => {
      const path = store.slice('jsonl:'.length);
      const lines = readFileSync(path, 'utf8').split('\n');
      lines[8] = (lines[8] as string).replace('"status":200', '"status":404');
      writeFileSync(path, lines.join('\n'));
    },
  ],
  [
    'postgres',
    () => schema.url,
    async () => {
      await schema.query('UPDATE audit SET status = 404 WHERE seq = 9');
    },
  ],
];

describe.skipIf(skipWithoutGoReference)('the audit log, checked by Go’s sumdb/note and sumdb/tlog', () => {
  describe.each(stores)('on %s', (kind, storeOf, changeRecord9) => {
    const store = storeOf();
    const out = join(dir, `proofs-${kind}`);

    it('checkpoints open with the vkey; a record’s proof passes CheckRecord; a consistency proof passes CheckTree; one changed byte fails each', async () => {
      await serveRequests(store, 7);
      const older = cli(store, 'audit', 'checkpoint');
      expect(older.stderr).toBe('');
      expect(older.stdout).toMatch(new RegExp(`^${ORIGIN}\\n7\\n[A-Za-z0-9+/]{43}=\\n\\n— ${ORIGIN} `));
      const oldNote = file(`${kind}-old.note`, older.stdout);
      await serveRequests(store, 6);

      const vkey = runCli(['audit', 'vkey'], env);
      expect(vkey.stdout).toMatch(new RegExp(`^${ORIGIN}\\+[0-9a-f]{8}\\+`));
      const vkeyFile = file(`${kind}.vkey`, vkey.stdout);
      const newer = cli(store, 'audit', 'checkpoint');
      expect(newer.stdout.split('\n')[1]).toBe('13');
      const newNote = file(`${kind}-new.note`, newer.stdout);

      // A record found by its request id, proven against the newest checkpoint.
      const [third] = JSON.parse(cli(store, 'audit', 'query', '--json', '--limit', '3').stdout).slice(2);
      const proven = cli(store, 'audit', 'prove', third.requestId, '--out', out);
      expect(proven.stderr).toBe('');
      expect(proven.stdout).toContain('record 3:');
      const entry = join(out, '3.entry');
      const proof = join(out, '3.tlog-proof');
      expect(readFileSync(entry, 'utf8')).toMatch(/^\[4,3,"[0-9a-f]{64}",/);
      // A record is personal data: its entry is readable by its owner only.
      expect(statSync(entry).mode & 0o777).toBe(0o600);
      expect(readFileSync(proof, 'utf8')).toContain(`c2sp.org/tlog-proof@v1\nindex 2\n`);
      expect(cli(store, 'audit', 'prove', '--seq', '12', '--out', out).ok).toBe(true);
      const consistency = cli(store, 'audit', 'prove', '--consistency', '7');
      expect(consistency.ok).toBe(true);
      const hashes = file(`${kind}.consistency`, consistency.stdout);

      // Changed bytes: the entry, a hash of the proof, the note's body.
      const proofText = readFileSync(proof, 'utf8');
      const firstHash = proofText.split('\n')[2] as string;
      const otherHash = `${firstHash[0] === 'A' ? 'B' : 'A'}${firstHash.slice(1)}`;
      const badEntry = file(`${kind}-bad.entry`, flipByte(readFileSync(entry), 20));
      const badProof = file(`${kind}-bad.tlog-proof`, proofText.replace(firstHash, otherHash));
      const noteText = readFileSync(newNote, 'utf8');
      const badNote = file(`${kind}-bad.note`, noteText.replace('\n13\n', '\n14\n'));
      const badHashes = file(
        `${kind}-bad.consistency`,
        consistency.stdout.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
      );
      const verdicts = goChecks([
        `note ${vkeyFile} ${newNote}`,
        `note ${vkeyFile} ${oldNote}`,
        `incl ${vkeyFile} ${entry} ${proof}`,
        `incl ${vkeyFile} ${join(out, '12.entry')} ${join(out, '12.tlog-proof')}`,
        `cons ${vkeyFile} ${oldNote} ${newNote} ${hashes}`,
        `incl ${vkeyFile} ${badEntry} ${proof}`,
        `incl ${vkeyFile} ${entry} ${badProof}`,
        `note ${vkeyFile} ${badNote}`,
        `cons ${vkeyFile} ${oldNote} ${newNote} ${badHashes}`,
        `cons ${vkeyFile} ${oldNote} ${badNote} ${hashes}`,
      ]);
      expect(verdicts.slice(0, 5)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      for (const verdict of verdicts.slice(5)) expect(verdict).toMatch(/^fail: /);

      // The service's own offline check agrees.
      expect(runCli(['audit', 'verify-proof', proof, entry, '--vkey', vkeyFile], env).status).toBe(0);
      expect(runCli(['audit', 'verify-proof', proof, badEntry, '--vkey', vkeyFile], env).status).toBe(1);

      // The whole trail verifies with its notes checked; and from the saved checkpoint on.
      const full = cli(store, 'audit', 'verify', '--public-key', join(keyDir, 'audit-signing-key.pub.pem'));
      expect(full.stdout).toMatch(/^audit chain intact: 13 record\(s\)/);
      const since = cli(store, 'audit', 'verify', '--since', oldNote, '--vkey', vkeyFile);
      expect(since.stderr).toBe('');
      expect(since.stdout).toMatch(
        /intact since the checkpoint of 7 records: the newest checkpoint \(13\) extends it, and the 6 record/,
      );
      expect(since.status).toBe(0);
      // A checkpoint that is not signed by the key given is refused, not trusted.
      const forged = cli(store, 'audit', 'verify', '--since', badNote, '--vkey', vkeyFile);
      expect(forged.stdout).toMatch(/REFUSED: .*does not verify/);
      expect(forged.status).toBe(1);

      // A record after the saved checkpoint changed: --since names it; prove refuses it.
      await changeRecord9(store);
      const changed = cli(store, 'audit', 'verify', '--since', oldNote, '--vkey', vkeyFile);
      expect(changed.stdout).toMatch(/BROKEN at record 9: its contents do not match its hash/);
      expect(changed.status).toBe(1);
      const refused = cli(store, 'audit', 'prove', '--seq', '9', '--out', out);
      expect(refused.stderr).toMatch(
        /record 9 as stored is not the leaf the checkpoint of 13 records signed/,
      );
      expect(refused.status).toBe(1);
    }, 120_000);
  });
});
