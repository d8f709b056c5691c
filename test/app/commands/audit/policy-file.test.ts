import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newCosignerKey } from '../../../../src/adapters/crypto/cosigner-keys.js';
import {
  MAX_POLICY_BYTES,
  readWitnessPolicyFile,
} from '../../../../src/app/composition/witness-policy-file.js';
import { ConfigError } from '../../../../src/app/config-error.js';
import { run } from './cosigned-trail.js';

/**
 * The witness policy file as `serve` (AUDIT_WITNESS_POLICY) and the audit commands (--policy)
 * read it: a regular file of a bounded size, UTF-8, a C2SP tlog-policy; anything else refused
 * naming the file, and the line.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-policy-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const problem = (path: string, what = 'AUDIT_WITNESS_POLICY:') => {
  try {
    readWitnessPolicyFile(path, what);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('readWitnessPolicyFile', () => {
  const w = newCosignerKey('witness.test/a').vkey;

  it('reads a policy: its witnesses and quorum', () => {
    const path = file('policy', `# one witness\nwitness a ${w} https://a.witness.test\nquorum a\n`);
    const policy = readWitnessPolicyFile(path, '--policy');
    expect(policy.witnesses.map((x) => [x.name, x.url, x.line])).toEqual([
      ['a', 'https://a.witness.test', 2],
    ]);
    expect(policy.quorum).toEqual({ kind: 'witness', name: 'a' });
  });

  it('refuses, naming the file and the line, what is not a policy', () => {
    const path = file('bad', `witness a ${w}\nquorum b\n`);
    expect(problem(path)).toEqual([
      `AUDIT_WITNESS_POLICY: ${path}: line 2: "b" is not defined on an earlier line`,
    ]);
    const noteKey = file('note-key', `witness a ${w.replace(/\+[^+]*$/, '+AQ==')}\nquorum a\n`);
    expect(problem(noteKey, '--policy')[0]).toMatch(
      new RegExp(`^--policy ${noteKey}: line 1: the witness key: `),
    );
  });

  it('refuses a file that cannot be read, a directory, a FIFO (without blocking on it), one too big, and bytes that are not UTF-8', () => {
    expect(problem(join(dir, 'none'))).toEqual([
      `AUDIT_WITNESS_POLICY: ${join(dir, 'none')} cannot be read (ENOENT)`,
    ]);
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    expect(problem(sub)).toEqual([`AUDIT_WITNESS_POLICY: ${sub} is not a regular file (a directory)`]);
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(problem(fifo)).toEqual([`AUDIT_WITNESS_POLICY: ${fifo} is not a regular file (a FIFO)`]);
    const big = file('big', `${'#'.repeat(MAX_POLICY_BYTES)}\nquorum none\n`);
    expect(problem(big)).toEqual([`AUDIT_WITNESS_POLICY: ${big} is over ${MAX_POLICY_BYTES} bytes`]);
    const latin1 = file('latin1', Buffer.from('# caf\xe9\nquorum none\n', 'latin1'));
    expect(problem(latin1)).toEqual([`AUDIT_WITNESS_POLICY: ${latin1}: it is not UTF-8 text`]);
  });

  it('is a command error of the audit commands, on one line', async () => {
    const path = file('bad-for-command', 'quorum\n');
    const refused = await run([
      'audit',
      'checkpoints',
      '--policy',
      path,
      '--audit-store',
      `sqlite:${join(dir, 'x.db')}`,
    ]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(`case-read: --policy ${path}: line 1: a quorum line is "quorum <name>"\n`);
  });
});
