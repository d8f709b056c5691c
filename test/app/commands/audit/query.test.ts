import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonlAuditLog } from '../../../../src/adapters/jsonl/audit-log.js';
import { main } from '../../../../src/app/cli.js';
import type { Io } from '../../../../src/app/commands/io.js';
import { auditRecord } from '../../../contract/audit-log.contract.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-audit-query-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `case-read audit ARGS` in this process and returns what it wrote out. */
async function run(args: string[]): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const io: Io = { out: (line) => out.push(line), err: () => {}, env: {}, stderrIsTty: false };
  const code = await main(['audit', ...args], io);
  return { code, out };
}

describe('case-read audit query', () => {
  it('shows the serial of an issued certificate when a record holds one, in text and in --json', async () => {
    const path = join(dir, 'audit.jsonl');
    const log = JsonlAuditLog.open(path, { mode: 'write' });
    await log.append(auditRecord(1));
    await log.append(auditRecord(2, { operation: 'renewCertificate', crn: null, issued: '7F3A9C00E1' }));
    log.close();
    const store = ['--audit-store', `jsonl:${path}`];

    const text = await run(['query', ...store]);
    expect(text.code).toBe(0);
    expect(text.out).toEqual([
      '1  2026-01-01T00:00:01.000Z  client-a  getCase X123456  200  req-1',
      '2  2026-01-01T00:00:02.000Z  client-b  renewCertificate  200  issued 7F3A9C00E1  req-2',
    ]);

    const json = await run(['query', '--json', ...store]);
    expect(json.code).toBe(0);
    const records = JSON.parse(json.out.join('\n')) as { seq: number; version: number; issued: unknown }[];
    expect(records.map((r) => [r.seq, r.version, r.issued])).toEqual([
      [1, 4, null],
      [2, 4, '7F3A9C00E1'],
    ]);
  });
});
