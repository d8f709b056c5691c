#!/usr/bin/env node
// npm run bench [-- SCENARIO...] [--smoke] [--audit sqlite|jsonl] [--rounds N] [--baseline DIR]
//                                [--baseline-node PATH] [--baseline-node-options S] [--node-options S]
//                                [--cpu-prof] [--postgres] [--records N] [--archived N]
//
// Drives the full service (mutual TLS, API key, bearer verification, permission, SQLite
// lookup) and what it is compared with, with autocannon, in alternating rounds (A B A B ...),
// each server in its own process, on loopback. Prints req/s, p50, p99 and RSS for each, and
// each scenario's ratios; the first keepalive or handshake scenario's `ratio X` (service /
// bare) and `cpu ratio Y` close the output. Numbers are also written as JSON under
// bench/results/. Speed goals are judged by reading the output, never asserted here.
//
// Scenarios, one file each under bench/scenarios/ (each file says what it measures):
//   keepalive (default), handshake, scale, token, engines, audit, upstream, runtimes,
//   limited, tracing, checkpoints, witnesses, tls-stores, subject-access. The shared machinery is
//   under bench/lib/.
//   --smoke: half a second of each, to check the harness; nothing is judged.
//   --audit jsonl: the service writes its audit trail to a JSONL file instead of SQLite.
//   --rounds N: N measured rounds per server instead of 3.
//   --baseline DIR (or BENCH_BASELINE=DIR): keepalive, handshake, tracing and upstream also measure
//            `serve` from another built checkout (the commit before, say) in the same rounds.
//   --baseline-node PATH (or BENCH_BASELINE_NODE): the node binary that runs the baseline
//            (another Node line: scripts/registry-node.sh 22 prints one); the bench's own unless told.
//   --node-options S, --baseline-node-options S: NODE_OPTIONS for `serve` on Node, and for the
//            baseline (the image's --max-semi-space-size against none, say).
//   --cpu-prof: profiles the service (under Node) and prints the newest profile's top costs.
//   --postgres: `scale` generates its stores in PostgreSQL instead of SQLite.
//   --records N, --archived N: subject-access's trail (10,000,000 and 9,000,000; under --smoke
//            20,000 and 15,000), generated once and cached (bench/lib/sar-trail.mjs says where).
// PostgreSQL and Redis: BENCH_POSTGRES_URL (postgres://root@127.0.0.1:5432/test) and
// BENCH_REDIS_URL (redis://127.0.0.1:6379); each run uses its own schemas and key prefix.
//
// However the run ends (done, a scenario throwing, SIGINT/SIGTERM/SIGHUP), every server it
// started is stopped, its temporary directory removed and its schemas dropped.
import { constants } from 'node:os';
import { parseArgs, UsageError } from './lib/args.mjs';
import { loadCaseRead } from './lib/cli.mjs';
import { makeWorkDir, removeWorkDir, setUpFixtures } from './lib/fixtures.mjs';
import { sharedStores } from './lib/postgres.mjs';
import { stopAll } from './lib/processes.mjs';
import { printHeading, printHeadline, printProfile, writeResults } from './lib/report.mjs';
import { createAlternate } from './lib/rounds.mjs';
import { createServers } from './lib/servers.mjs';
import { audit } from './scenarios/audit.mjs';
import { checkpoints } from './scenarios/checkpoints.mjs';
import { engines } from './scenarios/engines.mjs';
import { handshake } from './scenarios/handshake.mjs';
import { keepalive } from './scenarios/keepalive.mjs';
import { limited } from './scenarios/limited.mjs';
import { runtimes } from './scenarios/runtimes.mjs';
import { scale } from './scenarios/scale.mjs';
import { subjectAccess } from './scenarios/subject-access.mjs';
import { tlsStores } from './scenarios/tls-stores.mjs';
import { token } from './scenarios/token.mjs';
import { tracing } from './scenarios/tracing.mjs';
import { upstream } from './scenarios/upstream.mjs';
import { witnesses } from './scenarios/witnesses.mjs';

// In the order the usage error lists them. Each takes the bench (below) and resolves to its
// entry of the results file.
const SCENARIOS = {
  keepalive,
  handshake,
  scale,
  token,
  engines,
  audit,
  upstream,
  runtimes,
  limited,
  tracing,
  checkpoints,
  witnesses,
  'tls-stores': tlsStores,
  'subject-access': subjectAccess,
};

/**
 * subject-access's `--records N`, `--archived N`, `--disclosures N` (the big crn's records) and `--door-only`, taken out of `argv` (lib/args.mjs knows
 * nothing of them); a value that is not a whole number is a usage error.
 */
function trailSizes(argv) {
  const rest = [...argv];
  const sizes = {};
  for (const [flag, key] of [
    ['--records', 'sarRecords'],
    ['--archived', 'sarArchived'],
    ['--disclosures', 'sarDisclosures'],
  ]) {
    const at = rest.indexOf(flag);
    if (at === -1) continue;
    const value = Number(rest[at + 1]?.replaceAll('_', ''));
    if (!(Number.isSafeInteger(value) && value > 0))
      throw new UsageError(`${flag} takes a whole number above 0`);
    sizes[key] = value;
    rest.splice(at, 2);
  }
  // --door-only: the SAR door's part alone, without the offline runs and the full scans.
  const doorOnly = rest.indexOf('--door-only');
  if (doorOnly !== -1) {
    sizes.sarDoorOnly = true;
    rest.splice(doorOnly, 1);
  }
  return { rest, sizes };
}

let options;
try {
  const { rest, sizes } = trailSizes(process.argv.slice(2));
  options = { ...parseArgs(rest, Object.keys(SCENARIOS)), ...sizes };
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(2);
}
const { settings, smoke, selected, cpuProf, auditKind } = options;
const caseRead = await loadCaseRead();
const shared = sharedStores();
const dir = makeWorkDir();

let cleaning;
/** Stops every server still running, removes the directory, drops the schemas; once. */
const cleanUp = () => {
  cleaning ??= (async () => {
    await stopAll();
    removeWorkDir(dir);
    await shared.dropSchemas();
  })();
  return cleaning;
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    process.exitCode = 128 + constants.signals[signal];
    cleanUp().finally(() => process.exit());
  });
}

const results = [];
try {
  const fixtures = await setUpFixtures({ dir, caseRead, auditKind });
  const bench = {
    options,
    settings,
    fixtures,
    shared,
    servers: createServers({
      fixtures,
      cpuProf,
      baselineNode: options.baselineNode,
      nodeOptions: options.nodeOptions,
      baselineNodeOptions: options.baselineNodeOptions,
    }),
    alternate: createAlternate({ settings, tls: fixtures.tls }),
  };
  printHeading(options);
  for (const name of selected) {
    process.stdout.write(`\n== ${name}\n`);
    results.push(await SCENARIOS[name](bench));
    // The profile of the scenario just run (its services write theirs when they stop).
    if (cpuProf) printProfile();
  }
} finally {
  await cleanUp();
}
writeResults({ smoke, settings, results });
printHeadline(results);
