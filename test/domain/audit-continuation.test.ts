import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/adapters/shared/sha256.js';
import {
  auditEntryOf,
  auditRecordOfEntry,
  canonicalAuditText,
} from '../../src/domain/audit/canonical-text.js';
import { chainRecord, GENESIS_HASH } from '../../src/domain/audit/chain.js';
import { AuditChainWalker } from '../../src/domain/audit/chain-walker.js';
import {
  CONTINUATION_HEADER,
  continuationRecord,
  continuationText,
  parseContinuationText,
  REASON_MAX,
  reasonProblem,
  type TrailContinuation,
} from '../../src/domain/audit/continuation.js';

/** A trail's continuation (ADR 30): its statement's text read back, and the version-5 record that carries it. */

const C: TrailContinuation = {
  origin: 'case-read.test.example/audit-2',
  vkey: 'case-read.test.example/audit-2+0a0b0c0d+AQKEYB',
  previous: 'case-read.test.example/audit',
  previousVkey: 'case-read.test.example/audit+01020304+AQKEYA',
  kept: 120,
  held: 320,
  lastKept: new Date('2026-12-02T04:00:00.000Z'),
  broke: new Date('2026-12-02T05:10:00.000Z'),
  reason: 'restored from the 04:00 backup (INC-1234)',
};

describe('the continuation statement', () => {
  it('is eight lines read back as written', () => {
    const text = continuationText(C);
    expect(text.split('\n')).toEqual([
      CONTINUATION_HEADER,
      `origin ${C.origin}`,
      `vkey ${C.vkey}`,
      `previous ${C.previous}`,
      `previous-vkey ${C.previousVkey}`,
      'kept 120',
      'held 320',
      'last-kept 2026-12-02T04:00:00.000Z',
      'break 2026-12-02T05:10:00.000Z',
      `reason ${C.reason}`,
      '',
    ]);
    expect(parseContinuationText(text)).toEqual(C);
    const none = { ...C, kept: 0, lastKept: null };
    expect(parseContinuationText(continuationText(none))).toEqual(none);
  });

  it('refuses a statement of no loss, a reason of two lines or too long, and a changed text', () => {
    expect(() => continuationText({ ...C, held: 120 })).toThrow(/fewer records than were held/);
    expect(reasonProblem('')).toMatch(/empty/);
    expect(reasonProblem('two\nlines')).toMatch(/one line/);
    expect(reasonProblem(' padded')).toMatch(/one line/);
    expect(reasonProblem('x'.repeat(REASON_MAX + 1))).toMatch(/longer than 500/);
    expect(reasonProblem('x'.repeat(REASON_MAX))).toBeUndefined();
    expect(reasonProblem('a \uD800 b')).toMatch(/lone surrogate/);
    expect(reasonProblem('restauré: 😀')).toBeUndefined();
    const text = continuationText(C);
    const changed = (from: string, to: string) => parseContinuationText(text.replace(from, to));
    expect(changed('held 320', 'held 100')).toMatchObject({
      invalid: expect.stringMatching(/not more than kept/),
    });
    expect(changed('kept 120', 'kept 0120')).toMatchObject({
      invalid: expect.stringMatching(/not a number/),
    });
    expect(changed('last-kept 2026-12-02T04:00:00.000Z', 'last-kept none')).toHaveProperty('invalid');
    expect(changed('break 2026-12-02T05:10:00.000Z', 'break 2026-12-02T05:10:00Z')).toHaveProperty('invalid');
    expect(changed(`previous ${C.previous}`, `previous ${C.origin}`)).toHaveProperty('invalid');
    // Each key is named by its log; the two logs' keys differ (a new log has a key of its own).
    expect(changed(`vkey ${C.vkey}`, `vkey ${C.previousVkey}`)).toMatchObject({
      invalid: expect.stringMatching(/not named by its log's origin/),
    });
    expect(changed('+0a0b0c0d+AQKEYB', '+0a0b0c0d+AQKEYA')).toMatchObject({
      invalid: expect.stringMatching(/same key/),
    });
    expect(changed(CONTINUATION_HEADER, 'case-read trail continuation/v2')).toHaveProperty('invalid');
    expect(parseContinuationText(`${text}extra\n`)).toHaveProperty('invalid');
  });
});

describe('the record that carries it (format version 5)', () => {
  const record = continuationRecord(C, `${continuationText(C)}\n— ${C.origin} AAAA\n`, 'request-1');

  it('is linked as version 5, its entry read back to the byte, the chain walked', () => {
    const first = chainRecord(
      { ...record, continuation: null, operation: 'getCase' },
      1,
      GENESIS_HASH,
      sha256Hex,
    );
    expect(first.version).toBe(4);
    const linked = chainRecord(record, 2, first.hash, sha256Hex);
    expect(linked.version).toBe(5);
    expect(linked.continuation).toBe(record.continuation);
    const entry = auditEntryOf(linked) as string;
    expect(JSON.parse(entry).at(-1)).toBe(record.continuation);
    expect(auditRecordOfEntry(entry, sha256Hex)).toEqual(linked);
    const walker = new AuditChainWalker(sha256Hex);
    expect(walker.next(first)).toBe(true);
    expect(walker.next(linked)).toBe(true);
  });

  it('a statement changed, taken off, or put on a version-4 record breaks the chain', () => {
    const linked = chainRecord(record, 1, GENESIS_HASH, sha256Hex);
    const walk = (r: typeof linked) => new AuditChainWalker(sha256Hex).next(r);
    expect(walk({ ...linked, continuation: `${linked.continuation}x` })).toBe(false);
    expect(walk({ ...linked, continuation: null })).toBe(false);
    const plain = chainRecord({ ...record, continuation: null }, 1, GENESIS_HASH, sha256Hex);
    const dressed = { ...plain, continuation: 'a statement' };
    const walker = new AuditChainWalker(sha256Hex);
    expect(walker.next(dressed)).toBe(false);
    expect(walker.result()).toMatchObject({
      reason: expect.stringMatching(/version-4 record carries a continuation/),
    });
    // A version-5 text without its last field is not an entry.
    const text = canonicalAuditText(linked, 1, GENESIS_HASH, undefined, 5);
    const cut = `${JSON.stringify(JSON.parse(text).slice(0, -1))}`;
    expect(auditRecordOfEntry(cut, sha256Hex)).toBeUndefined();
  });
});
