import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonlAuditLog } from '../../../src/adapters/jsonl/audit-log.js';
import { GROW_EVERY } from '../../../src/adapters/jsonl/audit-tree-file.js';
import { jsonlStores } from '../../../src/adapters/jsonl/store-kind.js';
import { sha256Hex } from '../../../src/adapters/shared/sha256.js';
import { canonicalAuditText } from '../../../src/domain/audit/canonical-text.js';
import { GENESIS_HASH } from '../../../src/domain/audit/chain.js';
import {
  auditRecord,
  checkpointAt,
  continuationRecord,
  continuationStatement,
  cosignatureLine,
} from '../../contract/audit-log.contract.js';
import { grownAndReferenceRoots } from '../../support/merkle-reference.js';
import { testContext } from '../../support/stores.js';

let dir: string;
let path: string;
const open = () => JsonlAuditLog.open(path, { mode: 'write' });
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-jsonl-'));
  path = join(dir, 'audit.jsonl');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function writeThree(): Promise<void> {
  const log = open();
  for (let i = 1; i <= 3; i++) await log.append(auditRecord(i));
  log.close();
}

describe('JSONL audit store', () => {
  it('grows its tree by itself every 65,536 records with no checkpoint to grow it: what waits in memory stays bounded', async () => {
    const log = open();
    const count = GROW_EVERY + 100;
    for (let i = 1; i <= GROW_EVERY - 10; i++) void log.append(auditRecord(i));
    await log.flush();
    expect(await log.treeSize()).toBe(0);
    // The batch that passes the bound grows the tree over every record, never asked to.
    for (let i = GROW_EVERY - 9; i <= count; i++) void log.append(auditRecord(i));
    await log.flush();
    expect(await log.treeSize()).toBe(count);
    const roots = await grownAndReferenceRoots(log);
    expect(roots.grown).toBe(roots.reference);
    expect(await log.treeSize()).toBe(count);
    log.close();
  }, 60_000);

  it('writes one JSON object per line, fields by name, readable only by its owner', async () => {
    await writeThree();
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    const second = JSON.parse(lines[1] as string);
    expect(Object.keys(second)).toEqual([
      'version',
      'seq',
      'at',
      'requestId',
      'clientId',
      'certificateSerial',
      'onBehalfOf',
      'operation',
      'crn',
      'status',
      'problem',
      'access',
      'issued',
      'previousHash',
      'hash',
    ]);
    expect(second).toMatchObject({
      version: 4,
      seq: 2,
      at: '2026-01-01T00:00:02.000Z',
      requestId: 'req-2',
      status: 200,
      problem: null,
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('writes a continuation record as a version-5 line, "continuation" after "issued"; every other line byte for byte as before', async () => {
    const log = open();
    await log.append(auditRecord(1));
    await log.append(continuationRecord(2));
    await log.append(auditRecord(3));
    const stored = await log.query({});
    log.close();
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines).toHaveLength(4);
    // An ordinary line: exactly the text written before format 5 (no continuation field at all).
    const first = auditRecord(1);
    const hash = sha256Hex(`\u0000${canonicalAuditText(first, 1, GENESIS_HASH)}`);
    expect(lines[0]).toBe(
      `{"version":4,"seq":1,"at":"2026-01-01T00:00:01.000Z","requestId":"req-1","clientId":"client-a","certificateSerial":"AB12","onBehalfOf":null,"operation":"getCase","crn":"X123456","status":200,"problem":null,"access":null,"issued":null,"previousHash":"${GENESIS_HASH}","hash":"${hash}"}`,
    );
    expect(lines[2]).not.toContain('continuation');
    const second = JSON.parse(lines[1] as string);
    expect(Object.keys(second)).toEqual([
      'version',
      'seq',
      'at',
      'requestId',
      'clientId',
      'certificateSerial',
      'onBehalfOf',
      'operation',
      'crn',
      'status',
      'problem',
      'access',
      'issued',
      'continuation',
      'previousHash',
      'hash',
    ]);
    expect(second).toMatchObject({
      version: 5,
      seq: 2,
      continuation: continuationStatement(2),
      hash: stored[1]?.hash,
    });
    // Its hash is the leaf hash of the version-5 text.
    expect(second.hash).toBe(
      sha256Hex(`\u0000${canonicalAuditText(continuationRecord(2), 2, hash, undefined, 5)}`),
    );
  });

  it.each([
    [
      'a version-5 line without a continuation',
      (line: Record<string, unknown>) => ({ ...line, continuation: undefined }),
    ],
    [
      'a version-5 line whose continuation is null',
      (line: Record<string, unknown>) => ({ ...line, continuation: null }),
    ],
    [
      'a version-5 line whose continuation is not text',
      (line: Record<string, unknown>) => ({ ...line, continuation: 5 }),
    ],
    ['a version-4 line with a continuation', (line: Record<string, unknown>) => ({ ...line, version: 4 })],
  ])('a line is not a record when its version and its continuation disagree: %s', async (_label, change) => {
    const log = open();
    await log.append(auditRecord(1));
    await log.append(continuationRecord(2));
    await log.append(auditRecord(3));
    log.close();
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[1] = JSON.stringify(change(JSON.parse(lines[1] as string)));
    writeFileSync(path, lines.join('\n'));
    const reader = JsonlAuditLog.open(path, { mode: 'read' });
    expect(await reader.verify()).toEqual({
      ok: false,
      records: 2,
      brokenAt: 2,
      reason: 'line 2 is not an audit record: it was changed',
    });
    // Nor is it passed over as if it held none: the read refuses, naming the line.
    await expect(reader.continuations()).rejects.toThrow(/line 2 of audit store .* is not an audit record/);
  });

  it('continues a trail of version-1 lines (written before) with version-4 records, and it all verifies', async () => {
    // Two lines as the version before wrote them: no version, problem or access.
    let previous = '0'.repeat(64);
    let text = '';
    for (let seq = 1; seq <= 2; seq++) {
      const record = auditRecord(seq);
      const hash = sha256Hex(canonicalAuditText(record, seq, previous, undefined, 1));
      text += `{"seq":${seq},"at":"${record.at.toISOString()}","requestId":"${record.requestId}","clientId":"${record.clientId}","certificateSerial":"AB12","onBehalfOf":null,"operation":"getCase","crn":"${record.crn}","status":200,"previousHash":"${previous}","hash":"${hash}"}\n`;
      previous = hash;
    }
    writeFileSync(path, text, { mode: 0o600 });
    const log = open();
    await log.append(auditRecord(4));
    expect(await log.verify()).toEqual({ ok: true, records: 3 });
    // The tree grows over the records written before format 4 and after: RFC 9162's root of their entries.
    const roots = await grownAndReferenceRoots(log);
    expect(roots.grown).toBe(roots.reference);
    expect((await log.query({})).map((r) => [r.version, r.problem])).toEqual([
      [1, null],
      [1, null],
      [4, 'limited-access'],
    ]);
    log.close();
  });

  it('continues a trail of version-2 lines (written before, no issued) with version-4 records, and it all verifies', async () => {
    // Two lines as the version before wrote them: a version, problem and access, no issued.
    let previous = '0'.repeat(64);
    let text = '';
    for (let seq = 1; seq <= 2; seq++) {
      const record = auditRecord(seq);
      const hash = sha256Hex(canonicalAuditText(record, seq, previous, undefined, 2));
      text += `{"version":2,"seq":${seq},"at":"${record.at.toISOString()}","requestId":"${record.requestId}","clientId":"${record.clientId}","certificateSerial":"AB12","onBehalfOf":null,"operation":"getCase","crn":"${record.crn}","status":200,"problem":null,"access":null,"previousHash":"${previous}","hash":"${hash}"}\n`;
      previous = hash;
    }
    writeFileSync(path, text, { mode: 0o600 });
    const log = open();
    await log.append(auditRecord(3, { operation: 'renewCertificate', issued: '7F3A9C00E1' }));
    expect(await log.verify()).toEqual({ ok: true, records: 3 });
    // The tree grows over the records written before format 4 and after: RFC 9162's root of their entries.
    const roots = await grownAndReferenceRoots(log);
    expect(roots.grown).toBe(roots.reference);
    expect((await log.query({})).map((r) => [r.version, r.issued])).toEqual([
      [2, null],
      [2, null],
      [4, '7F3A9C00E1'],
    ]);
    log.close();
    // A version-2 line given an issued certificate afterwards does not verify.
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[0] = JSON.stringify({ ...JSON.parse(lines[0] as string), issued: '7F3A9C00E1' });
    writeFileSync(path, lines.join('\n'));
    expect(await JsonlAuditLog.open(path, { mode: 'read' }).verify()).toEqual({
      ok: false,
      records: 1,
      brokenAt: 1,
      reason: 'a version-2 record carries version-3 fields: it was changed',
    });
  });

  it('cuts off an unfinished last line when it opens, says so, and continues the chain', async () => {
    await writeThree();
    appendFileSync(path, '{"seq":4,"at":"2026-01-');
    const logged: unknown[] = [];
    const log = JsonlAuditLog.open(path, {
      mode: 'write',
      log: (level, fields, message) => logged.push({ level, fields, message }),
    });
    await log.append(auditRecord(5));
    expect((await log.query({})).map((r) => [r.seq, r.requestId])).toEqual([
      [1, 'req-1'],
      [2, 'req-2'],
      [3, 'req-3'],
      [4, 'req-5'],
    ]);
    expect(await log.verify()).toEqual({ ok: true, records: 4 });
    expect(logged).toEqual([
      {
        level: 'warn',
        fields: { store: 'audit', path, bytes: 23 },
        message: expect.stringMatching(/unfinished line .*cut off/),
      },
    ]);
    log.close();
  });

  it("keeps cosignatures and witness sizes in PATH.witnesses (0600), one JSON line per event; the checkpoint file's lines are as before", async () => {
    const log = open();
    await log.append(auditRecord(1));
    const checkpoint = checkpointAt(1, (await log.head()).hash);
    const [a, b] = [cosignatureLine('w1.example', 1), cosignatureLine('w2.example', 2)];
    await log.saveCheckpoint({ ...checkpoint, cosignatures: [a] });
    await log.addCosignatures(checkpoint, [a, b]);
    await log.saveWitnessSize('w1.example+1a2b3c4d+BHCKmT', 1);
    // The size it holds already: nothing written.
    await log.saveWitnessSize('w1.example+1a2b3c4d+BHCKmT', 1);
    log.close();
    expect(readFileSync(`${path}.checkpoints`, 'utf8')).toBe(`${JSON.stringify(checkpoint)}\n`);
    const lines = readFileSync(`${path}.witnesses`, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(0, -1).map((line) => JSON.parse(line))).toEqual([
      { cosigned: 'key-one c2lnbmF0dXJl', lines: [a] },
      { cosigned: 'key-one c2lnbmF0dXJl', lines: [b] },
      { witness: 'w1.example+1a2b3c4d+BHCKmT', size: 1, at: expect.stringMatching(/^\d{4}-.*Z$/) },
    ]);
    expect(statSync(`${path}.witnesses`).mode & 0o777).toBe(0o600);
    const reader = JsonlAuditLog.open(path, { mode: 'read' });
    expect(await reader.newestCheckpoint()).toEqual({ ...checkpoint, cosignatures: [a, b] });
    await expect(reader.addCosignatures(checkpoint, [a])).rejects.toThrow(/opened to be read/);
    await expect(reader.saveWitnessSize('w1.example+1a2b3c4d+BHCKmT', 2)).rejects.toThrow(
      /opened to be read/,
    );
  });

  it('cuts off an unfinished last line of the witness file when it opens, says so, and writes the next one whole', async () => {
    const first = open();
    await first.append(auditRecord(1));
    const checkpoint = checkpointAt(1, (await first.head()).hash);
    await first.saveCheckpoint(checkpoint);
    await first.saveWitnessSize('w1.example+1a2b3c4d+BHCKmT', 1);
    first.close();
    const cut = '{"cosigned":"key-one c2lnbmF0dXJl","lines":["— w1';
    appendFileSync(`${path}.witnesses`, cut);
    const logged: unknown[] = [];
    const log = JsonlAuditLog.open(path, {
      mode: 'write',
      log: (level, fields, message) => logged.push({ level, fields, message }),
    });
    expect(logged).toEqual([
      {
        level: 'warn',
        fields: { store: 'audit', path: `${path}.witnesses`, bytes: Buffer.byteLength(cut) },
        message: expect.stringMatching(/witness file ended in an unfinished line; it was cut off/),
      },
    ]);
    const line = cosignatureLine('w1.example', 1);
    await log.addCosignatures(checkpoint, [line]);
    log.close();
    const reader = JsonlAuditLog.open(path, { mode: 'read' });
    const read = [];
    for await (const c of reader.checkpoints()) read.push(c);
    expect(read).toEqual([{ ...checkpoint, cosignatures: [line] }]);
    expect(await reader.witnessSizes()).toEqual(new Map([['w1.example+1a2b3c4d+BHCKmT', 1]]));
  });

  it('names each line of the witness file that is not a well-formed event, or cosigns a checkpoint not held; a bad size is left out', async () => {
    const log = open();
    await log.append(auditRecord(1));
    const checkpoint = checkpointAt(1, (await log.head()).hash);
    await log.saveCheckpoint(checkpoint);
    log.close();
    const line = cosignatureLine('w1.example', 1);
    writeFileSync(
      `${path}.witnesses`,
      [
        'not json',
        JSON.stringify({ cosigned: 'key-one c2lnbmF0dXJl', lines: ['— w1.example not-base64'] }),
        JSON.stringify({ cosigned: 'key-one', lines: [line] }),
        JSON.stringify({ witness: 'w1.example+1a2b3c4d+BHCKmT', size: -1 }),
        JSON.stringify({ something: 'else' }),
        JSON.stringify({ cosigned: 'key-one b3RoZXI', lines: [line] }),
        JSON.stringify({ cosigned: 'key-one c2lnbmF0dXJl', lines: [line] }),
        '',
      ].join('\n'),
    );
    const reader = JsonlAuditLog.open(path, { mode: 'read' });
    const read = [];
    for await (const c of reader.checkpoints()) read.push(c);
    const file = `${path}.witnesses`;
    expect(read).toEqual([
      { ...checkpoint, cosignatures: [line] },
      { invalid: `line 1 of ${file}: not JSON` },
      { invalid: `line 2 of ${file}: cosignature 1 is not a signature line "— NAME BASE64"` },
      { invalid: `line 3 of ${file}: cosigned is not a checkpoint id (KEYID SIGNATURE)` },
      { invalid: expect.stringMatching(new RegExp(`^line 4 of ${file}: a witness's size must be`)) },
      { invalid: `line 5 of ${file}: neither a cosigned checkpoint nor a witness size` },
      { invalid: `line 6 of ${file} cosigns a checkpoint ${path}.checkpoints does not hold` },
    ]);
    expect(await reader.witnessSizes()).toEqual(new Map());
    expect(await reader.newestCheckpoint()).toEqual({ ...checkpoint, cosignatures: [line] });
  });

  it('refuses to open when the last whole line is not a record, naming the verify command', async () => {
    await writeThree();
    appendFileSync(path, 'not json\n');
    expect(open).toThrow(/last line of audit store .* is not an audit record; run case-read audit verify/);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('verify names a line that is not a record', async () => {
    await writeThree();
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[1] = '{"seq":2,';
    writeFileSync(path, lines.join('\n'));
    const reader = JsonlAuditLog.open(path, { mode: 'read' });
    expect(await reader.verify()).toEqual({
      ok: false,
      records: 2,
      brokenAt: 2,
      reason: 'line 2 is not an audit record: it was changed',
    });
  });

  it('refuses appends once the file was moved away, and readiness says so; nothing is written elsewhere', async () => {
    const log = open();
    await log.append(auditRecord(1));
    renameSync(path, join(dir, 'moved.jsonl'));
    await expect(log.append(auditRecord(2))).rejects.toThrow(/moved or removed while open/);
    await expect(log.ping()).rejects.toThrow(/moved or removed/);
    expect(readFileSync(join(dir, 'moved.jsonl'), 'utf8').split('\n').length).toBe(2);
    log.close();
  });

  it('takes over the lock of a writer that is gone, and refuses one held by a live process', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    writeFileSync(`${path}.lock`, `${gone.stdout.toString()}\n`);
    const log = open();
    await log.append(auditRecord(1));
    expect(readFileSync(`${path}.lock`, 'utf8')).toBe(`${process.pid}\n`);
    log.close();
    expect(existsSync(`${path}.lock`)).toBe(false);

    writeFileSync(`${path}.lock`, `${process.ppid}\n`);
    expect(open).toThrow(`is being written by process ${process.ppid}`);
  });

  it('a reader sees what the writer wrote, takes no lock, and cannot append', async () => {
    const writer = open();
    await writer.append(auditRecord(1));
    const reader = JsonlAuditLog.open(path, { mode: 'read' });
    expect((await reader.query({})).map((r) => r.requestId)).toEqual(['req-1']);
    await expect(reader.append(auditRecord(2))).rejects.toThrow(/opened to be read/);
    reader.close();
    expect(existsSync(`${path}.lock`)).toBe(true);
    writer.close();
  });

  it('as a store kind: serve creates it; the audit commands need it to exist', async () => {
    const url = `jsonl:${path}`;
    expect(jsonlStores.problem('jsonl:')).toMatch(/needs the path of a file/);
    expect(jsonlStores.problem('jsonl:/var/log/case-read/')).toMatch(
      /^jsonl:\/var\/log\/case-read\/ names a directory; jsonl: needs the path of a file/,
    );
    await expect(jsonlStores.audit?.open(url, testContext, { create: false })).rejects.toThrow(
      /does not exist/,
    );
    const opened = await jsonlStores.audit?.open(url, testContext, { create: true });
    await opened?.value.append(auditRecord(1));
    await opened?.ping();
    await opened?.close();
    const read = await jsonlStores.audit?.open(url, testContext, { create: false });
    expect(await read?.value.verify()).toEqual({ ok: true, records: 1 });
    await read?.close();
  });
});
