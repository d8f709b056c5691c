import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosignedTrail, logKeys, ORIGIN, run, witness } from './audit/cosigned-trail.js';

/**
 * `case-read subject-access verify ANSWER` (decisions §22, §23; ADR 27), a command below
 * `subject-access`, which still runs on its own with its --crn: an answer `subject-access`
 * printed from a trail whose checkpoint a witness cosigned is accepted with the log's verifier
 * key or its public key; one hash changed, a file that is not an answer, a directory or a FIFO,
 * and no key are refused, each naming why; --crn is neither asked of it nor taken by it.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-sar-verify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = `sqlite:${join(dir, 'trail.db')}`;
const CRN = 'X123456';
let keys: Awaited<ReturnType<typeof logKeys>>;
/** The answer `subject-access` printed, as a file. */
let answerFile: string;
let answerText: string;

/** `text` saved as a file of its own, named `name`. */
function saved(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

beforeAll(async () => {
  keys = await logKeys(dir);
  // 40 records (two thirds of them name X123456), a checkpoint of them cosigned by a witness.
  await cosignedTrail(join(dir, 'trail.db'), keys, [{ size: 40, by: [witness('w1')] }]);
  const printed = await run([
    'subject-access',
    '--crn',
    CRN,
    '--audit-store',
    store,
    '--vkey',
    keys.vkeyFile,
  ]);
  if (printed.status !== 0) throw new Error(printed.stderr);
  answerText = printed.stdout;
  answerFile = saved('answer.json', answerText);
}, 60_000);

const verify = (file: string, ...more: string[]) => run(['subject-access', 'verify', file, ...more]);

describe('case-read subject-access verify', () => {
  it('accepts the answer subject-access printed (still run with --crn), with the verifier key or the public key', async () => {
    const { content } = JSON.parse(answerText) as {
      content: { disclosures: unknown[]; proof: { checkpoint: string } };
    };
    expect(content.disclosures).toHaveLength(27);
    expect(content.proof.checkpoint).toContain('— witness.test/w1 ');
    const line = `27 disclosure(s) of ${CRN} proved against the checkpoint of 40 records of ${ORIGIN}, each shown as its entry says\n`;
    expect(await verify(answerFile, '--vkey', keys.vkeyFile)).toEqual({
      status: 0,
      stdout: line,
      stderr: '',
    });
    expect(await verify(answerFile, '--vkey', keys.vkey)).toEqual({ status: 0, stdout: line, stderr: '' });
    expect(await verify(answerFile, '--public-key', keys.publicKey, '--origin', ORIGIN)).toEqual({
      status: 0,
      stdout: line,
      stderr: '',
    });
  });

  it('says, on a line of its own, the losses an answer states, read, not proved; refuses a malformed one (exit 1)', async () => {
    const answer = JSON.parse(answerText) as { content: { gaps: unknown[] } };
    expect(answer.content.gaps).toEqual([]);
    answer.content.gaps = [
      {
        from: null,
        to: '2026-03-01T02:00:00.000Z',
        recordsLost: 7,
        reason: 'restored from the first backup',
      },
      {
        from: '2026-11-10T04:00:00.000Z',
        to: '2026-11-10T05:10:00.000Z',
        recordsLost: 5,
        reason: 'a restore',
      },
    ];
    const stated = await verify(saved('gaps.json', JSON.stringify(answer)), '--vkey', keys.vkeyFile);
    expect(stated).toEqual({
      status: 0,
      stdout: `27 disclosure(s) of ${CRN} proved against the checkpoint of 40 records of ${ORIGIN}, each shown as its entry says\nthe answer states 2 loss(es) of the audit trail in its window (12 record(s) lost), not proved by it: case-read audit verify checks the trail's signed statement of each\n`,
      stderr: '',
    });
    answer.content.gaps = [{ from: null, to: '2026-03-01', recordsLost: 7, reason: 'r' }];
    const file = saved('bad-gap.json', JSON.stringify(answer));
    const malformed = await verify(file, '--vkey', keys.vkeyFile);
    expect(malformed).toMatchObject({ status: 1, stdout: '' });
    expect(malformed.stderr).toBe(
      `case-read: ${file} is not a subject access answer: content.gaps[0].to is not a time (ISO 8601 UTC)\n`,
    );
  });

  it('refuses the answer with one hash changed, naming the first disclosure not proved (exit 1)', async () => {
    const answer = JSON.parse(answerText) as { content: { proof: { hashes: string } } };
    const hashes = Buffer.from(answer.content.proof.hashes, 'base64');
    hashes[hashes.length - 1] = (hashes[hashes.length - 1] ?? 0) ^ 1;
    answer.content.proof.hashes = hashes.toString('base64');
    const file = saved('changed.json', JSON.stringify(answer));
    const result = await verify(file, '--vkey', keys.vkeyFile);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(
        `^case-read: ${file}: disclosure \\d+ of 27 \\(index \\d+, requestId "req-\\d+"\\) is not proved: .*\\n$`,
      ),
    );
  });

  it('refuses a checkpoint of another log, and a file that is not an answer, naming what is wrong (exit 1)', async () => {
    mkdirSync(join(dir, 'other'));
    const other = await logKeys(join(dir, 'other'));
    const another = await verify(answerFile, '--vkey', other.vkey);
    expect(another.status).toBe(1);
    expect(another.stderr).toMatch(/^case-read: \S+: the answer's checkpoint: /);
    for (const [name, text, why] of [
      ['empty.json', '{}', 'it has no "content" object'],
      ['truncated.json', answerText.slice(0, 200), 'it is not JSON'],
    ] as const) {
      const file = saved(name, text);
      const result = await verify(file, '--vkey', keys.vkeyFile);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`case-read: ${file} is not a subject access answer: ${why}`);
    }
  });

  it('refuses a directory or a FIFO at once, naming what it is, as other commands do', async () => {
    const directory = await verify(dir, '--vkey', keys.vkeyFile);
    expect(directory).toMatchObject({ status: 1, stdout: '' });
    expect(directory.stderr).toBe(`case-read: ${dir} is not a regular file (a directory)\n`);
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const refused = await verify(fifo, '--vkey', keys.vkeyFile);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(`case-read: ${fifo} is not a regular file (a FIFO)\n`);
  });

  it('needs a key (exit 2), never --crn, and takes no --crn of its own', async () => {
    const keyless = await verify(answerFile);
    expect(keyless.status).toBe(2);
    expect(keyless.stderr).toContain('a checkpoint is checked with a key');
    expect(keyless.stderr).toContain("Run 'case-read subject-access verify --help' for its usage.");
    const withCrn = await verify(answerFile, '--vkey', keys.vkeyFile, '--crn', CRN);
    expect(withCrn.status).toBe(2);
    expect(withCrn.stderr.split('\n')[0]).toBe("case-read: unknown option '--crn'");
    // subject-access itself still asks for its --crn.
    const noCrn = await run(['subject-access', '--audit-store', store, '--vkey', keys.vkeyFile]);
    expect(noCrn.status).toBe(2);
    expect(noCrn.stderr).toContain("required option '--crn <CRN>' not specified");
    expect(noCrn.stderr).toContain("Run 'case-read subject-access --help' for its usage.");
  });
});
