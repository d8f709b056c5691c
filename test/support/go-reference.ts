import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

/**
 * Go's reference implementation of signed notes and transparency-log trees
 * (golang.org/x/mod/sumdb/note and sumdb/tlog, Debian's golang-golang-x-mod-dev), the
 * independent verifier of the audit log's formats (decisions §14). `.ci/run` installs it; a
 * machine without it skips those tests, except on CI, where they must run.
 */
const GO_MOD = '/usr/share/gocode/src/golang.org/x/mod/sumdb/tlog';

export const hasGoReference = spawnSync('sh', ['-c', 'command -v go']).status === 0 && existsSync(GO_MOD);

/** Whether tests that need the Go reference are skipped here: only where it is missing, never on CI. */
export const skipWithoutGoReference = !hasGoReference && !process.env.CI;

/**
 * Runs test/support/go/c2sp-check on each check, compiled once: "ok" or "fail: …" for each
 * line (`note VKEY NOTE`, `incl VKEY ENTRY PROOF`, `cons VKEY OLD NEW HASHES`, `cosig VKEY
 * WITNESS_VKEYS NOTE`, …: the list atop main.go).
 */
export function goChecks(lines: readonly string[]): string[] {
  const result = spawnSync('go', ['run', join(ROOT, 'test/support/go/c2sp-check/main.go')], {
    input: `${lines.join('\n')}\n`,
    encoding: 'utf8',
    env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '' },
    timeout: 120_000,
  });
  if (result.status !== 0) throw new Error(`go run failed: ${result.stderr}`);
  return result.stdout.trimEnd().split('\n');
}

/**
 * Compiles the Go program `source` (a main.go of this repository) to `out`, in GOPATH mode
 * against the Go reference as {@link goChecks} runs it, and returns `out`: so a test runs it
 * many times for one compile.
 */
export function goBuild(source: string, out: string): string {
  const result = spawnSync('go', ['build', '-o', out, join(ROOT, source)], {
    encoding: 'utf8',
    env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '' },
    timeout: 180_000,
  });
  if (result.status !== 0) throw new Error(`go build ${source} failed: ${result.stderr}`);
  return out;
}
