import { mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonlAuditLog } from '../../src/adapters/jsonl/audit-log.js';
import { type AuditTamper, describeAuditLogContract } from './audit-log.contract.js';

/** Rewrites the file's lines as an editor would: one line changed or dropped. */
function tamperFile(path: string, change: AuditTamper): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  const index = lines.findIndex((line) => line !== '' && JSON.parse(line).seq === change.seq);
  if (index === -1) throw new Error(`no record ${change.seq}`);
  if ('remove' in change) lines.splice(index, 1);
  else lines[index] = JSON.stringify({ ...JSON.parse(lines[index] as string), ...change.set });
  writeFileSync(path, lines.join('\n'));
}

describeAuditLogContract(
  'jsonl',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'case-read-audit-jsonl-'));
    const path = join(dir, 'audit.jsonl');
    let refusing = false;
    return {
      open: async () => {
        const log = JsonlAuditLog.open(path, {
          mode: 'write',
          // A full disk: half the batch reaches the file, then the write fails.
          writeText: (fd, text) => {
            if (!refusing) return writeSync(fd, text);
            writeSync(fd, text.slice(0, Math.floor(text.length / 2)));
            throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
          },
        });
        return { log, close: async () => log.close() };
      },
      tamper: async (change) => tamperFile(path, change),
      refuseWrites: async () => {
        refusing = true;
      },
      allowWrites: async () => {
        refusing = false;
      },
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  { writers: 'one', archives: false },
);
