#!/usr/bin/env node
// Runs the runtime-portable part of the test suite under the other supported Node lines, 22
// and 26 (`npm test` runs everything on the Node running it, 24 in CI), each brought from the
// npm registry by scripts/registry-node.sh, and under Bun and Deno (both installed as
// devDependencies): the domain, every port's contract suite on every adapter (SQLite on
// bun:sqlite and node:sqlite), the SQLite driver seam, the JSONL audit store, the HTTP
// adapter behind the mutual-TLS listener `serve` picks for the runtime, and that listener's
// slow-client limits and certificate rotation, the audit checkpoints' keys and scheduler, and
// the upstream store's reading of local date-times in a time zone, and the refusal of a key
// file others can read. Under Bun and Deno, every store kind's own tests run too: each
// folder of src/adapters holding a store-kind.ts has its tests (test/adapters/FOLDER) run
// there, found on the disk, so a new store kind's tests run on every runtime without an edit
// here; a file one runtime cannot run is named in NOT_UNDER with the reason. `npm test` runs
// it after vitest has run everything under Node. The end-to-end suite (test/e2e) starts
// `serve` itself under all three runtimes from Node.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { registryNode } from './registry-node.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));
const vitest = 'node_modules/vitest/vitest.mjs';
const SUITES = [
  'test/domain',
  'test/formats',
  'test/contract',
  'test/adapters/sqlite',
  'test/adapters/jsonl',
  'test/adapters/crypto',
  // Local date-times given their offset by each runtime's own zone data.
  'test/adapters/upstream/local-time.test.ts',
  'test/adapters/upstream/reading.test.ts',
  // The timer that ends an upstream, STS or AWS Private CA call, on each runtime's timers.
  'test/adapters/shared/call-budget.test.ts',
  // A key or secret file readable by others refused: each runtime's file modes, through symlinks.
  'test/adapters/shared/secret-files.test.ts',
  'test/adapters/shared/named-files.test.ts',
  // Consumer CSRs read and client certificates issued with each runtime's WebCrypto.
  'test/adapters/x509/client-certificates.test.ts',
  'test/app/audit/checkpointing.test.ts',
  'test/adapters/http',
  'test/adapters/tls-listener/slow-client.test.ts',
  'test/adapters/tls-listener/rotation.test.ts',
  // The SAR service's door's listener: TLS with no client certificate asked (decisions §23).
  'test/adapters/tls-listener/no-client-certificate.test.ts',
];

/** The test files of every store kind (an adapter folder with a store-kind.ts), found on the disk. */
const STORE_KIND_TESTS = readdirSync(new URL('../src/adapters/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .filter((folder) => existsSync(new URL(`../src/adapters/${folder}/store-kind.ts`, import.meta.url)))
  .filter((folder) => existsSync(new URL(`../test/adapters/${folder}`, import.meta.url)))
  .flatMap((folder) =>
    readdirSync(new URL(`../test/adapters/${folder}`, import.meta.url), { recursive: true })
      .filter((file) => file.endsWith('.test.ts'))
      .map((file) => `test/adapters/${folder}/${file}`),
  );

/** What a runtime cannot run of the store kinds' tests, and why: the runtime, not the store. */
const NOT_UNDER = {
  Bun: {
    // Its stand-in token endpoint is a node:https server that asks for a client certificate and
    // changes its own with setSecureContext, which Bun's node:https does not do.
    'test/adapters/upstream/token-endpoint-tls.test.ts': 'the stand-in needs setSecureContext',
    // Bun's fetch waits for the bytes a lying Content-Length promises: the read ends at its
    // deadline (a 504), where Node's and Deno's end at once (a 502), which the file asserts.
    'test/adapters/upstream/faults.test.ts': "a lying Content-Length ends at the deadline on Bun's fetch",
  },
  Deno: {},
};

const RUNTIMES = [
  // The same build (better-sqlite3 loads by Node-API, so one binary serves every line).
  { name: 'Node22', command: () => `${registryNode('22')}/bin/node`, args: [vitest], extra: [] },
  { name: 'Node26', command: () => `${registryNode('26')}/bin/node`, args: [vitest], extra: [] },
  // The CLI suite runs the binary on the runtime running the tests: on Bun, every command
  // and `serve` under Bun. Not under Deno: its child_process reports a child that handled
  // SIGTERM and exited 0 as killed by the signal (code null), so the suite's exit-code
  // checks cannot be read there; test/e2e runs `serve` and the CLI under Deno from Node.
  {
    name: 'Bun',
    command: () => bin('bun'),
    args: ['--bun', vitest],
    extra: [...STORE_KIND_TESTS, 'test/app/cli.test.ts'],
  },
  { name: 'Deno', command: () => bin('deno'), args: ['run', '-A', vitest], extra: STORE_KIND_TESTS },
];

const only = process.argv.slice(2);
let failed = false;
for (const runtime of RUNTIMES) {
  if (only.length > 0 && !only.includes(runtime.name.toLowerCase())) continue;
  // (Named by file: vitest's --exclude does not reach the projects of vitest.config.ts.)
  const excluded = Object.keys(NOT_UNDER[runtime.name] ?? {});
  const suites = [...new Set([...SUITES, ...runtime.extra])].filter((suite) => !excluded.includes(suite));
  process.stdout.write(
    `\n=== vitest under ${runtime.name}: ${suites.join(' ')}${excluded.length > 0 ? ` (not ${excluded.join(', ')})` : ''}\n`,
  );
  let command;
  try {
    command = runtime.command();
  } catch (error) {
    process.stderr.write(`vitest under ${runtime.name} not run: ${error.message}\n`);
    failed = true;
    continue;
  }
  const result = spawnSync(command, [...runtime.args, 'run', ...suites], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    process.stderr.write(
      `vitest under ${runtime.name} failed (${result.error?.message ?? `exit ${result.status}`})\n`,
    );
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
