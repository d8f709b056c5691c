import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonlAuditLog } from '../../../src/adapters/jsonl/audit-log.js';
import { main } from '../../../src/app/cli.js';
import { EXIT, OutputClosedError } from '../../../src/app/commands/exit.js';
import type { Io } from '../../../src/app/commands/io.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { BIN, ROOT } from '../../support/cli.js';
import { CURRENT } from '../../support/runtimes.js';

/**
 * Every kind of output the CLI writes survives a reader that closes early, as `head`, `less`
 * and `grep -q` do (issue 61): the built `case-read` ends quietly, with nothing on stderr (no
 * EPIPE stack trace) and exit 0 (all was written before the reader left) or 141 (it was cut
 * short: the status a shell shows for a command ended by SIGPIPE). Two readers: one that
 * reads the first line and closes (`| head -1`), and one that closes before reading anything
 * (`| true`), which makes the first write fail whatever the timing.
 */
const dir = mkdtempSync(join(tmpdir(), 'case-read-closed-reader-'));
const trail = join(dir, 'audit.jsonl');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  // Far more than a pipe holds (64 KiB): the command is still writing when its reader leaves.
  const log = JsonlAuditLog.open(trail, { mode: 'write' });
  for (let i = 1; i <= 3000; i++) await log.append(auditRecord(i));
  log.close();
});

type Reader = 'first line' | 'nothing';

interface Ended {
  status: number | null;
  signal: NodeJS.Signals | null;
  firstLine: string;
  stderr: string;
}

/** Runs the built CLI with its stdout read by `reader`, which then closes it. */
function runInto(reader: Reader, args: string[]): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(CURRENT.command, [...CURRENT.args, BIN, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let read = '';
    let firstLine = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    if (reader === 'nothing') child.stdout.destroy();
    else {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        read += chunk;
        const end = read.indexOf('\n');
        if (end >= 0 && !child.stdout.destroyed) {
          firstLine = read.slice(0, end);
          child.stdout.destroy();
        }
      });
    }
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, firstLine, stderr }));
  });
}

/** Each kind of output: commander's help, a document written at once, lines, and one JSON value. */
const OUTPUTS: { kind: string; args: string[]; first: RegExp }[] = [
  { kind: 'the root help', args: ['--help'], first: /^Usage: case-read / },
  { kind: "a command's help", args: ['help', 'audit', 'verify'], first: /^Usage: case-read audit verify / },
  { kind: 'a document written at once (openapi)', args: ['openapi'], first: /^\{"openapi":/ },
  {
    kind: 'lines written one by one (audit query)',
    args: ['audit', 'query', '--audit-store', `jsonl:${trail}`],
    first: /^1 {2}2026-01-01T00:00:01\.000Z {2}client-a/,
  },
  {
    kind: 'one JSON value (audit query --json)',
    args: ['audit', 'query', '--json', '--audit-store', `jsonl:${trail}`],
    first: /^\[/,
  },
];

describe('a reader that closes early', () => {
  for (const output of OUTPUTS) {
    for (const reader of ['first line', 'nothing'] as const) {
      it(`${output.kind}, into a reader that reads ${reader}: ends quietly, 0 or 141`, async () => {
        const ended = await runInto(reader, output.args);
        expect(ended.stderr).toBe('');
        expect(ended.signal).toBeNull();
        expect([0, 141]).toContain(ended.status);
        if (reader === 'first line') expect(ended.firstLine).toMatch(output.first);
      }, 60_000);
    }
  }

  it('a command whose output is closed stops at its next line, quietly, 141', async () => {
    // What the process's Io does once stdout's 'error' event has come: the next line throws.
    let lines = 0;
    const err: string[] = [];
    const io: Io = {
      out: () => {
        lines += 1;
        if (lines > 1) throw new OutputClosedError();
      },
      err: (line) => err.push(line),
      env: {},
      stderrIsTty: false,
    };
    expect(await main(['audit', 'query', '--audit-store', `jsonl:${trail}`], io)).toBe(EXIT.outputClosed);
    expect(EXIT.outputClosed).toBe(141);
    expect({ lines, err }).toEqual({ lines: 2, err: [] });
  });
});
