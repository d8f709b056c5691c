import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { AUDIT_COLUMNS, linkRecords, rowValuesOf } from '../../../src/adapters/shared/audit-chain.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import * as proving from '../../../src/app/audit/proving.js';
import { AuditProofError } from '../../../src/app/audit/proving.js';
import { auditHashes } from '../../../src/app/composition/audit-keys.js';
import { CheckpointSet, signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import type { StoredAuditRecord } from '../../../src/domain/audit/record.js';
import { storedIndexOf, verifyConsistency } from '../../../src/tlog/merkle.js';
import { type CheckpointBody, noteTextOf, parseCheckpointText } from '../../../src/tlog/note.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { execOn, openSqlite } from '../../support/sqlite.js';

/**
 * `audit verify --since` and the proofs, on a SQLite trail built through the adapter: what
 * each finds when a record after the saved checkpoint is changed, when the trail it covers is
 * rewritten (every later hash recomputed), and when the tree is rebuilt over the rewrite too.
 */

/** The questions as the commands ask them: with the composition root's SHA-256 handed in. */
const verifySince = (log: SqliteAuditLog, old: CheckpointBody, newest: CheckpointBody) =>
  proving.verifySince(auditHashes, log, old, newest);
const proveInclusion = (log: SqliteAuditLog, seq: number, checkpoint: CheckpointBody) =>
  proving.proveInclusion(auditHashes, log, seq, checkpoint);
const proveConsistency = (log: SqliteAuditLog, oldSize: number, newSize: number, signed: CheckpointBody) =>
  proving.proveConsistency(auditHashes, log, oldSize, newSize, signed);

const dir = mkdtempSync(join(tmpdir(), 'case-read-proving-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const keys = await generateCheckpointKeys();
const signer = await checkpointSigner(keys.privatePem, 'case-read.test.example/audit');

let path: string;
let log: SqliteAuditLog;
let n = 0;

/** The trail grown to `size` records, its tree grown and its checkpoint signed: the note's body. */
async function checkpointAt(size: number): Promise<CheckpointBody> {
  while ((await log.head()).seq < size) await log.append(auditRecord((await log.head()).seq + 1));
  const grown = await log.growTree();
  const checkpoint = signCheckpoint(grown.head, new Date(), signer, grown.root);
  await log.saveCheckpoint(checkpoint);
  const body = parseCheckpointText(noteTextOf(checkpoint.note as string) as string);
  if ('invalid' in body) throw new Error(body.invalid);
  return body;
}

/** Every record from `seq` on rewritten with a changed status, every later hash recomputed. */
async function rewriteFrom(seq: number) {
  const all = await log.query({ limit: 1000 });
  const before = all[seq - 2] as StoredAuditRecord;
  const changed = all.slice(seq - 1).map((r, i) => (i === 0 ? { ...r, status: 404 } : r));
  const { stored } = linkRecords(changed, { seq: before.seq, hash: before.hash });
  const db = openSqlite(path);
  db.exec(`DELETE FROM audit WHERE seq >= ${seq}`);
  const insert = db.prepare(
    `INSERT INTO audit (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`,
  );
  for (const r of stored) insert.run(...rowValuesOf(r));
  db.close();
}

beforeEach(() => {
  log?.close();
  path = join(dir, `audit-${++n}.db`);
  log = SqliteAuditLog.open(path);
});

describe('audit verify --since', () => {
  it('passes an untouched trail, reading only the records after the saved checkpoint', async () => {
    const old = await checkpointAt(20);
    const newest = await checkpointAt(40);
    await log.append(auditRecord(41));
    expect(await verifySince(log, old, newest)).toEqual({ ok: true, records: 21, since: 20, newest: 40 });
    // The same checkpoint given and newest: nothing to extend, the records after it verify.
    expect(await verifySince(log, newest, newest)).toMatchObject({ ok: true, records: 1 });
  });

  it('names a record changed after the saved checkpoint, in its text or with its hash made again', async () => {
    const old = await checkpointAt(20);
    const newest = await checkpointAt(40);
    execOn(path, 'UPDATE audit SET status = 404 WHERE seq = 30');
    expect(await verifySince(log, old, newest)).toMatchObject({
      ok: false,
      brokenAt: 30,
      reason: 'its contents do not match its hash: it was changed',
    });
    // Rewritten from 30 on, every hash made again: the chain holds, the signed root does not.
    await rewriteFrom(30);
    expect(await verifySince(log, old, newest)).toMatchObject({
      ok: false,
      brokenAt: 40,
      reason: expect.stringMatching(
        /do not make the newest checkpoint's root: one of records 21\.\.40 was changed/,
      ),
    });
  });

  it('refuses a trail rewritten before the saved checkpoint, and one whose tree was rebuilt over the rewrite', async () => {
    const old = await checkpointAt(20);
    const newest = await checkpointAt(40);
    await rewriteFrom(5);
    expect(await verifySince(log, old, newest)).toMatchObject({
      ok: false,
      brokenAt: 20,
      reason: 'record 20, the last the checkpoint given covers, was changed or removed',
    });
    // The tree rebuilt over the rewritten records: it no longer makes the signed roots.
    execOn(path, 'DELETE FROM audit_tree');
    await log.growTree();
    expect(await verifySince(log, old, newest)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/does not extend the one given: the trail up to record 20 was rewritten/),
    });
  });

  it('refuses a newest checkpoint older than the one given, and proofs it cannot make', async () => {
    const old = await checkpointAt(20);
    const newer = await checkpointAt(30);
    expect(await verifySince(log, newer, old)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/older than the one given/),
    });
    await expect(proveInclusion(log, 31, newer)).rejects.toThrow(AuditProofError);
    await expect(proveConsistency(log, 20, 31, newer)).rejects.toThrow(
      /the stored tree holds 30 records, not 31/,
    );
    await expect(proveConsistency(log, 0, 30, newer)).rejects.toThrow(AuditProofError);
  });
});

describe('audit prove --consistency', () => {
  /** `log` with the stored hash at `index` changed by one bit, as a tampered table would give it. */
  const tamperedAt = (index: number): SqliteAuditLog =>
    new Proxy(log, {
      get(target, name, receiver) {
        if (name !== 'treeHashes') return Reflect.get(target, name, receiver);
        return async (indexes: readonly number[]) => {
          const found = await target.treeHashes(indexes);
          const hash = found.get(index);
          if (hash !== undefined)
            found.set(
              index,
              hash.map((b, i) => (i === 0 ? b ^ 1 : b)),
            );
          return found;
        };
      },
    });

  it('gives the proof only when it makes the signed roots, to the newest checkpoint or a tree before it', async () => {
    const old = await checkpointAt(20);
    const mid = await checkpointAt(33);
    const newest = await checkpointAt(40);
    await log.append(auditRecord(41));
    await log.growTree();
    const toNewest = await proveConsistency(log, 20, 40, newest);
    expect(verifyConsistency(auditHashes.sha256, 20, 40, old.root, newest.root, toNewest)).toBe(true);
    const toMid = await proveConsistency(log, 20, 33, newest);
    expect(verifyConsistency(auditHashes.sha256, 20, 33, old.root, mid.root, toMid)).toBe(true);
    // A tree after the newest checkpoint has no signed root to check its proof against.
    await expect(proveConsistency(log, 20, 41, newest)).rejects.toThrow(
      /the tree of 41 records is after the newest checkpoint \(40 records\)/,
    );
  });

  it('refuses a proof made of a changed stored hash, never handing it out', async () => {
    await checkpointAt(20);
    const newest = await checkpointAt(40);
    // [0, 16) is a hash of the proof from 20 to 40; [16, 20) is the old tree's own, beside it.
    for (const subtree of [
      { level: 4, index: 0 },
      { level: 2, index: 4 },
      { level: 3, index: 4 },
    ]) {
      await expect(
        proveConsistency(tamperedAt(storedIndexOf(subtree)), 20, 40, newest),
        `${subtree.level}/${subtree.index}`,
      ).rejects.toThrow(/the stored tree .* was changed/);
    }
  });
});

describe('a full verify with signed roots', () => {
  it('checks the tree the records make against each note’s root', async () => {
    const body = await checkpointAt(10);
    const roots = new CheckpointSet();
    roots.addRoot(body.size, body.root);
    expect(await log.verify(roots)).toEqual({ ok: true, records: 10, checkpoints: 0 });
    await rewriteFrom(4);
    expect(await log.verify(roots)).toMatchObject({
      ok: false,
      brokenAt: 10,
      reason: expect.stringMatching(/differs from the root a checkpoint note signed at size 10/),
    });
    // Two notes that sign different roots for one size: a fork, refused.
    expect(roots.addRoot(10, new Uint8Array(32))).toBe(false);
    expect(roots.addRoot(10, body.root)).toBe(true);
  });
});
