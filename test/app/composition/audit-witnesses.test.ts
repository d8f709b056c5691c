import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, serveEnv } from '../../support/cli.js';
import { witnessKey } from '../../support/witness.js';

/**
 * AUDIT_WITNESS_POLICY at start (issue 54, item 1; decisions §19): `config check` and `serve`
 * refuse a policy that is malformed or not this trail's, naming the variable, the file and the
 * line; a good one's witnesses are shown among the hops.
 */

const ORIGIN = 'case-read.policy-test.example/audit';
let dir: string;
let env: Record<string, string>;
let logVkey: string;
let w1: string;
let w2: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-witness-policy-'));
  expect(runCli(['pki', 'init', '--dir', join(dir, 'pki')]).status).toBe(0);
  expect(runCli(['audit', 'keygen', '--dir', join(dir, 'audit-key')]).status).toBe(0);
  env = {
    ...serveEnv(dir),
    BEARER_MODE: 'off',
    AUDIT_SIGNING_KEY: join(dir, 'audit-key', 'audit-signing-key.pem'),
    AUDIT_ORIGIN: ORIGIN,
  };
  logVkey = runCli(['audit', 'vkey'], env).stdout.trim();
  w1 = witnessKey(join(dir, 'w1'), 'witness.test.example/w1').vkey;
  w2 = witnessKey(join(dir, 'w2'), 'witness.test.example/w2').vkey;
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function policy(name: string, lines: readonly string[]): string {
  const file = join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('AUDIT_WITNESS_POLICY', () => {
  it('config check accepts a policy of this trail and shows each witness as a hop', () => {
    const file = policy('good', [
      '# two witnesses, either will do',
      `log ${logVkey}`,
      `witness w1 ${w1} http://127.0.0.1:7380`,
      `witness w2 ${w2} https://w2.example.org/witness`,
      'group either any w1 w2',
      'quorum either',
    ]);
    const result = runCli(['config', 'check'], { ...env, AUDIT_WITNESS_POLICY: file });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/\n {2}witness w1 +127\.0\.0\.1:7380 +plaintext, on loopback/);
    expect(result.stdout).toMatch(
      /\n {2}witness w2 +w2\.example\.org:443 +TLS, the server's chain and host name verified/,
    );
  });

  it.each([
    ['a malformed line', ['log LOG', 'witness w1 W1 http://127.0.0.1:1', 'quorum'], /line 3/],
    [
      'a name used before it is defined',
      ['log LOG', 'group g any w1', 'witness w1 W1 http://127.0.0.1:1', 'quorum g'],
      /line 2/,
    ],
    [
      'a member listed twice',
      ['log LOG', 'witness w1 W1 http://127.0.0.1:1', 'group g 1 w1 w1', 'quorum g'],
      /line 3/,
    ],
    [
      'a witness key that is a log key (0x01), not a cosigner key',
      ['log LOG', 'witness w1 LOG http://127.0.0.1:1', 'quorum w1'],
      /line 2/,
    ],
    [
      'a witness over http off loopback',
      ['log LOG', 'witness w1 W1 http://w1.example.org', 'quorum w1'],
      /line 2.*https/,
    ],
    ['a witness without a URL', ['log LOG', 'witness w1 W1', 'quorum w1'], /line 2/],
    ['no log line of this trail', ['witness w1 W1 http://127.0.0.1:1', 'quorum w1'], /log/],
  ])('config check refuses %s, naming the variable, the file and the line', (_, lines, names) => {
    // The keys are made before the cases run: LOG and W1 stand for them here.
    const file = policy(
      'bad',
      lines.map((line) => line.replace('LOG', logVkey).replace('W1', w1)),
    );
    const result = runCli(['config', 'check'], { ...env, AUDIT_WITNESS_POLICY: file });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`AUDIT_WITNESS_POLICY: ${file}`);
    expect(result.stderr).toMatch(names);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses another trail's log line: the same origin under another key", () => {
    const otherDir = join(dir, 'other-key');
    expect(runCli(['audit', 'keygen', '--dir', otherDir]).status).toBe(0);
    const other = runCli(['audit', 'vkey'], {
      ...env,
      AUDIT_SIGNING_KEY: join(otherDir, 'audit-signing-key.pem'),
    }).stdout.trim();
    const file = policy('other', [`log ${other}`, `witness w1 ${w1} http://127.0.0.1:1`, 'quorum w1']);
    const result = runCli(['config', 'check'], { ...env, AUDIT_WITNESS_POLICY: file });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('AUDIT_WITNESS_POLICY');
  });

  it('needs AUDIT_SIGNING_KEY', () => {
    const file = policy('nokey', [`log ${logVkey}`, `witness w1 ${w1} http://127.0.0.1:1`, 'quorum w1']);
    const { AUDIT_SIGNING_KEY: _, ...unsigned } = env;
    const result = runCli(['config', 'check'], { ...unsigned, AUDIT_WITNESS_POLICY: file });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/AUDIT_WITNESS_POLICY.*needs AUDIT_SIGNING_KEY/);
  });

  it('serve refuses a malformed policy at start, naming the line, and a FIFO or a directory as the file', () => {
    const file = policy('serve-bad', [
      `log ${logVkey}`,
      `witness w1 ${w1} http://127.0.0.1:1`,
      'quorum nobody',
    ]);
    const result = runCli(['serve'], {
      ...env,
      HOST: '127.0.0.1',
      PORT: '0',
      MANAGEMENT_PORT: '0',
      AUDIT_WITNESS_POLICY: file,
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/AUDIT_WITNESS_POLICY.*line 3/);
    const fifo = join(dir, 'policy-fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    for (const notAFile of [dir, fifo]) {
      // A FIFO is refused, not waited on: the command ends without a writer.
      const refused = runCli(['config', 'check'], { ...env, AUDIT_WITNESS_POLICY: notAFile });
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain(`${notAFile} is not a regular file`);
    }
  });
});
