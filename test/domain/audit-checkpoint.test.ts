import { describe, expect, it } from 'vitest';
import { EMPTY_CHAIN, linkRecords } from '../../src/adapters/shared/audit-chain.js';
import { sha256Hex } from '../../src/adapters/shared/sha256.js';
import {
  type AuditCheckpoint,
  CheckpointSet,
  checkpointOf,
  checkpointSignedText,
} from '../../src/domain/audit/checkpoint.js';
import type { StoredAuditRecord } from '../../src/domain/audit/record.js';
import { auditRecord } from '../contract/audit-log.contract.js';
import { verifyAuditChain } from '../support/audit.js';

const checkpoint = (seq: number, head: string, signature = 'c2ln'): AuditCheckpoint => ({
  seq,
  head,
  time: '2026-11-23T10:00:00.000Z',
  keyId: 'k1',
  signature,
});

const chain = (length: number) =>
  linkRecords(
    Array.from({ length }, (_, i) => auditRecord(i + 1)),
    EMPTY_CHAIN,
  ).stored;

const walk = (records: readonly StoredAuditRecord[], checkpoints: CheckpointSet) =>
  verifyAuditChain(records, sha256Hex, checkpoints);

describe('checkpointSignedText', () => {
  it('covers every field but the signature, behind a label of its own', () => {
    const c = checkpoint(7, 'a'.repeat(64));
    expect(checkpointSignedText(c)).toBe(
      `["case-read audit checkpoint",1,7,"${'a'.repeat(64)}","2026-11-23T10:00:00.000Z","k1"]`,
    );
    for (const changed of [
      { seq: 8 },
      { head: 'b'.repeat(64) },
      { time: '2026-11-23T10:00:01.000Z' },
      { keyId: 'k2' },
    ]) {
      expect(checkpointSignedText({ ...c, ...changed })).not.toBe(checkpointSignedText(c));
    }
  });
});

describe('checkpointOf', () => {
  const good = checkpoint(3, 'c'.repeat(64));
  it('takes a well-formed checkpoint, and only its fields', () => {
    expect(checkpointOf({ ...good, extra: 'x' })).toEqual(good);
  });
  it.each<[string, unknown, RegExp]>([
    ['not an object', 'text', /not an object/],
    ['seq 0', { ...good, seq: 0 }, /seq/],
    ['seq as text', { ...good, seq: '3' }, /seq/],
    ['a short head', { ...good, head: 'abc' }, /head/],
    ['an upper-case head', { ...good, head: 'C'.repeat(64) }, /head/],
    ['a local time', { ...good, time: '2026-11-23T10:00:00+01:00' }, /time/],
    ['a time that is no date', { ...good, time: '2026-13-45T10:00:00Z' }, /time/],
    ['a key id with a slash', { ...good, keyId: 'a/b' }, /keyId/],
    ['a signature in base64 with padding', { ...good, signature: 'c2ln==' }, /signature/],
  ])('refuses %s', (_label, value, reason) => {
    const read = checkpointOf(value);
    expect(read).toEqual({ invalid: expect.stringMatching(reason) });
  });
});

describe('CheckpointSet', () => {
  it('counts a checkpoint read twice once, keeps two at one seq, and knows the newest', () => {
    const set = new CheckpointSet();
    expect(set.add(checkpoint(5, 'a'.repeat(64), 'b25l'))).toBe(true);
    expect(set.add(checkpoint(5, 'a'.repeat(64), 'b25l'))).toBe(false);
    expect(set.add(checkpoint(5, 'a'.repeat(64), 'dHdv'))).toBe(true);
    expect(set.add(checkpoint(2, 'b'.repeat(64)))).toBe(true);
    expect(set.size).toBe(3);
    expect(set.at(5)).toHaveLength(2);
    expect(set.newest?.seq).toBe(5);
    expect(set.firstAfter(1)?.seq).toBe(2);
    expect(set.firstAfter(2)?.seq).toBe(5);
    expect(set.firstAfter(5)).toBeUndefined();
  });
});

describe('AuditChainWalker with checkpoints', () => {
  const records = chain(6);
  const at = (seq: number) => records[seq - 1]?.hash ?? '';

  it('passes a chain through every checkpoint, and says how many', () => {
    const set = new CheckpointSet();
    set.add(checkpoint(2, at(2)));
    set.add(checkpoint(6, at(6)));
    expect(walk(records, set)).toEqual({ ok: true, records: 6, checkpoints: 2 });
  });

  it('names the checkpoint a recomputed chain differs from', () => {
    const set = new CheckpointSet();
    set.add(checkpoint(4, 'd'.repeat(64)));
    expect(walk(records, set)).toMatchObject({
      ok: false,
      brokenAt: 4,
      reason: expect.stringMatching(
        /^chain differs from checkpoint at seq 4 \(2026-11-23T10:00:00.000Z, key k1\)/,
      ),
      checkpoint: { seq: 4 },
    });
  });

  it('names the first checkpoint a chain cut short ends before', () => {
    const set = new CheckpointSet();
    set.add(checkpoint(3, at(3)));
    set.add(checkpoint(5, at(5)));
    set.add(checkpoint(6, at(6)));
    expect(walk(records.slice(0, 4), set)).toMatchObject({
      ok: false,
      brokenAt: 5,
      reason: expect.stringMatching(/^records missing after seq 4: the checkpoint at seq 5 /),
    });
  });

  it('reports a broken chain before any checkpoint', () => {
    const set = new CheckpointSet();
    set.add(checkpoint(6, at(6)));
    const changed = records.map((r) => (r.seq === 2 ? { ...r, status: 500 } : r));
    expect(walk(changed, set)).toMatchObject({
      ok: false,
      brokenAt: 2,
      reason: expect.stringMatching(/changed/),
    });
  });
});
