import { describe, expect, it } from 'vitest';
import { auditFieldTexts, canonicalAuditText } from '../../src/domain/audit/canonical-text.js';
import { chainRecord, GENESIS_HASH } from '../../src/domain/audit/chain.js';
import type { AuditRecord, StoredAuditRecord } from '../../src/domain/audit/record.js';
import { verifyAuditChain } from '../support/audit.js';

/** A stand-in hash: any injective function of the text proves the chain rules. */
const hash = (text: string) => `h(${text})`;

const record = (n: number, overrides: Partial<AuditRecord> = {}): AuditRecord => ({
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
  requestId: `req-${n}`,
  clientId: 'client-a',
  certificateSerial: 'AB12',
  onBehalfOf: null,
  operation: 'getCase',
  crn: 'X123456',
  status: 200,
  problem: null,
  access: null,
  issued: null,
  ...overrides,
});

function chain(n: number): StoredAuditRecord[] {
  const out: StoredAuditRecord[] = [];
  let previous = GENESIS_HASH;
  for (let i = 1; i <= n; i++) {
    const stored = chainRecord(record(i), i, previous, hash);
    out.push(stored);
    previous = stored.hash;
  }
  return out;
}

describe('the audit hash chain', () => {
  it('links each record to the one before, from the genesis hash', () => {
    const records = chain(3);
    expect(records[0]?.previousHash).toBe(GENESIS_HASH);
    expect(records[1]?.previousHash).toBe(records[0]?.hash);
    // Format 4: the hash is over the leaf prefix (0x00) and the text, the tree's leaf hash.
    expect(records[2]?.hash).toBe(
      hash(`\u0000${canonicalAuditText(record(3), 3, records[1]?.hash as string)}`),
    );
    expect(verifyAuditChain(records, hash)).toEqual({ ok: true, records: 3 });
  });

  it('the canonical text covers every field', () => {
    const base = canonicalAuditText(record(1), 1, GENESIS_HASH);
    const changes: Partial<AuditRecord>[] = [
      { at: new Date(0) },
      { requestId: 'x' },
      { clientId: 'x' },
      { certificateSerial: 'x' },
      { onBehalfOf: 'a@b.example' },
      { operation: 'x' },
      { crn: null },
      { status: 500 },
      { problem: 'limited-access' },
      { access: 'client-enforces' },
      { issued: '7F3A9C0011' },
    ];
    for (const change of changes)
      expect(canonicalAuditText(record(1, change), 1, GENESIS_HASH)).not.toBe(base);
    expect(canonicalAuditText(record(1), 2, GENESIS_HASH)).not.toBe(base);
  });

  it('the current text is the same to the byte whether made in one call or from the field texts', () => {
    // Strings that JSON escapes: quotes, backslashes, control characters, a lone surrogate,
    // the line separators, and characters outside the BMP; every nullable field both ways.
    const awkward = [
      '"quoted" \\ back',
      'tab\tnew\nline\u0000',
      'lone \ud800 surrogate',
      'sep \u2028 \u2029',
      'é ☃ 𝄞',
    ];
    const records = [
      record(1),
      record(2, { onBehalfOf: 'someone@example.org', problem: 'limited-access', access: 'client-enforces' }),
      record(3, { crn: null, status: 503, issued: '7F3A9C0011' }),
      ...awkward.map((text, i) =>
        record(10 + i, {
          requestId: text,
          clientId: text,
          certificateSerial: text,
          onBehalfOf: text,
          operation: text,
          crn: text,
          problem: text,
          access: text,
          issued: text,
        }),
      ),
    ];
    for (const r of records) {
      const joined = canonicalAuditText(r, 7, 'f'.repeat(64), auditFieldTexts(r));
      expect(canonicalAuditText(r, 7, 'f'.repeat(64))).toBe(joined);
      expect(JSON.parse(joined)).toHaveLength(14);
    }
  });

  it('version 1 records (written before) keep their text and verify, then version 4 records follow', () => {
    // A trail written by the version before: the text without the version, problem and access.
    const v1 = [1, 2].map((n) => record(n));
    let previous = GENESIS_HASH;
    const old: StoredAuditRecord[] = v1.map((r, i) => {
      const text = `[${i + 1},${JSON.stringify(previous)},"${r.at.toISOString()}","${r.requestId}","client-a","AB12",null,"getCase","X123456",200]`;
      expect(canonicalAuditText(r, i + 1, previous, undefined, 1)).toBe(text);
      const stored = { ...r, version: 1, seq: i + 1, previousHash: previous, hash: hash(text) };
      previous = stored.hash;
      return stored;
    });
    const next = chainRecord(record(3, { status: 403, problem: 'limited-access' }), 3, previous, hash);
    expect(next.version).toBe(4);
    expect(canonicalAuditText(next, 3, previous)).toMatch(/^\[4,3,.*,403,"limited-access",null,null\]$/);
    expect(verifyAuditChain([...old, next], hash)).toEqual({ ok: true, records: 3 });
    // Marking a version-1 record afterwards, or calling it version 2, is seen.
    const marked = [{ ...(old[0] as StoredAuditRecord), problem: 'x' }, old[1] as StoredAuditRecord];
    expect(verifyAuditChain(marked, hash)).toMatchObject({ ok: false, brokenAt: 1 });
    const issued = [{ ...(old[0] as StoredAuditRecord), issued: '7F3A9C0011' }, old[1] as StoredAuditRecord];
    expect(verifyAuditChain(issued, hash)).toMatchObject({
      ok: false,
      brokenAt: 1,
      reason: 'a version-1 record carries version-3 fields: it was changed',
    });
    const relabelled = [{ ...(old[0] as StoredAuditRecord), version: 2 }, old[1] as StoredAuditRecord];
    expect(verifyAuditChain(relabelled, hash)).toMatchObject({
      ok: false,
      brokenAt: 1,
      reason: expect.stringMatching(/changed/),
    });
    const unknown = [{ ...(old[0] as StoredAuditRecord), version: 6 }];
    expect(verifyAuditChain(unknown, hash)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/version 6/),
    });
  });

  it('version 2 records (written before) keep their text and verify, then version 4 records follow', () => {
    // A trail written by the version before: the text without `issued`.
    let previous = GENESIS_HASH;
    const old: StoredAuditRecord[] = [1, 2].map((n) => {
      const r = record(n, n === 2 ? { status: 403, problem: 'limited-access' } : {});
      const text =
        n === 1
          ? `[2,1,${JSON.stringify(previous)},"${r.at.toISOString()}","req-1","client-a","AB12",null,"getCase","X123456",200,null,null]`
          : `[2,2,${JSON.stringify(previous)},"${r.at.toISOString()}","req-2","client-a","AB12",null,"getCase","X123456",403,"limited-access",null]`;
      expect(canonicalAuditText(r, n, previous, undefined, 2)).toBe(text);
      const stored = { ...r, version: 2, seq: n, previousHash: previous, hash: hash(text) };
      previous = stored.hash;
      return stored;
    });
    const next = chainRecord(
      record(3, { operation: 'renewCertificate', issued: '7F3A9C0011' }),
      3,
      previous,
      hash,
    );
    expect(next).toMatchObject({ version: 4, issued: '7F3A9C0011' });
    expect(canonicalAuditText(next, 3, previous)).toBe(
      `[4,3,${JSON.stringify(previous)},"2026-01-01T00:00:03.000Z","req-3","client-a","AB12",null,"renewCertificate","X123456",200,null,null,"7F3A9C0011"]`,
    );
    expect(verifyAuditChain([...old, next], hash)).toEqual({ ok: true, records: 3 });
    // A certificate put on a version-2 record afterwards is seen, whatever the hash says.
    const issued = [{ ...(old[0] as StoredAuditRecord), issued: '7F3A9C0011' }, old[1] as StoredAuditRecord];
    expect(verifyAuditChain(issued, hash)).toMatchObject({
      ok: false,
      brokenAt: 1,
      reason: 'a version-2 record carries version-3 fields: it was changed',
    });
    // Calling a version-2 record version 3 is seen too: its text is not the one hashed.
    const relabelled = [{ ...(old[0] as StoredAuditRecord), version: 3 }, old[1] as StoredAuditRecord];
    expect(verifyAuditChain(relabelled, hash)).toMatchObject({
      ok: false,
      brokenAt: 1,
      reason: expect.stringMatching(/contents do not match/),
    });
  });

  it('finds a changed record', () => {
    const records = chain(4);
    records[2] = { ...(records[2] as StoredAuditRecord), status: 404 };
    expect(verifyAuditChain(records, hash)).toMatchObject({
      ok: false,
      brokenAt: 3,
      reason: expect.stringMatching(/changed/),
    });
  });

  it('finds a removed record', () => {
    const records = chain(4);
    records.splice(1, 1);
    expect(verifyAuditChain(records, hash)).toMatchObject({
      ok: false,
      brokenAt: 3,
      reason: expect.stringMatching(/missing/),
    });
  });

  it('finds a record removed from the end only by count, so verify reports how many it saw', () => {
    expect(verifyAuditChain(chain(4).slice(0, 3), hash)).toEqual({ ok: true, records: 3 });
  });

  it('finds reordered records', () => {
    const records = chain(3);
    const swapped = [
      records[0],
      { ...(records[2] as StoredAuditRecord), seq: 2 },
      { ...(records[1] as StoredAuditRecord), seq: 3 },
    ] as StoredAuditRecord[];
    expect(verifyAuditChain(swapped, hash)).toMatchObject({ ok: false, brokenAt: 2 });
  });
});

describe('format 4: the hash is the leaf hash', () => {
  it('version 3 records (written before, plain hash) verify, then version 4 records follow; a relabelled record is seen', () => {
    let previous = GENESIS_HASH;
    const old: StoredAuditRecord[] = [1, 2].map((n) => {
      const r = record(n);
      const text = canonicalAuditText(r, n, previous, undefined, 3);
      expect(text.startsWith(`[3,${n},`)).toBe(true);
      const stored = { ...r, version: 3, seq: n, previousHash: previous, hash: hash(text) };
      previous = stored.hash;
      return stored;
    });
    const next = chainRecord(record(3), 3, previous, hash);
    expect(next.hash).toBe(hash(`\u0000${canonicalAuditText(record(3), 3, previous)}`));
    expect(verifyAuditChain([...old, next], hash)).toEqual({ ok: true, records: 3 });
    // A version-3 record called version 4 (or the reverse): its hash is not what that format makes.
    const up = [{ ...(old[0] as StoredAuditRecord), version: 4 }];
    expect(verifyAuditChain(up, hash)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/contents do not match/),
    });
    const down = [...old, { ...next, version: 3 }];
    expect(verifyAuditChain(down, hash)).toMatchObject({ ok: false, brokenAt: 3 });
  });
});

describe('canonicalAuditText', () => {
  // Chains already stored were hashed over JSON.stringify of the field array: the text put
  // together from the fields' own JSON must be that, byte for byte, whatever the strings hold.
  it.each([
    ['plain', record(1)],
    ['on behalf of, no crn', record(2, { onBehalfOf: 'officer@probation.example', crn: null })],
    [
      'quotes, backslashes and control characters',
      record(3, { clientId: 'a"b\\c\n\t\u0001', operation: 'GET /x"y' }),
    ],
    [
      'non-ASCII and lone surrogates',
      record(4, { onBehalfOf: 'zoë@exämple.test', requestId: '\ud800x\u2028' }),
    ],
    ['an error status', record(5, { status: 503 })],
    ['a refusal, marked', record(6, { status: 403, problem: 'limited-access', access: 'client-enforces' })],
    ['a certificate issued', record(7, { operation: 'renewCertificate', issued: '7F3A9C0011' })],
  ])('is JSON.stringify of the field array: %s', (_label, r) => {
    const previous = 'ab'.repeat(32);
    const v1 = [
      7,
      previous,
      r.at.toISOString(),
      r.requestId,
      r.clientId,
      r.certificateSerial,
      r.onBehalfOf,
      r.operation,
      r.crn,
      r.status,
    ];
    expect(canonicalAuditText(r, 7, previous, undefined, 1)).toBe(JSON.stringify(v1));
    expect(canonicalAuditText(r, 7, previous, undefined, 2)).toBe(
      JSON.stringify([2, ...v1, r.problem, r.access]),
    );
    expect(canonicalAuditText(r, 7, previous, undefined, 3)).toBe(
      JSON.stringify([3, ...v1, r.problem, r.access, r.issued]),
    );
    expect(canonicalAuditText(r, 7, previous)).toBe(
      JSON.stringify([4, ...v1, r.problem, r.access, r.issued]),
    );
    expect(canonicalAuditText(r, 7, previous, auditFieldTexts(r), 4)).toBe(
      canonicalAuditText(r, 7, previous),
    );
  });
});
