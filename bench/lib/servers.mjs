// The servers the scenarios measure, each in a process of its own on loopback: `serve`
// (under any runtime, optionally CPU-profiled), the bare node:https and Hono servers answering
// a fixed body, and `serve` from another built checkout (--baseline).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { NODE } from '../../scripts/runtimes.mjs';
import { grantsOf } from './grants.mjs';
import { PROFILE_DIR, ROOT } from './paths.mjs';
import { startProcess } from './processes.mjs';

/** The port of `serve` from its `"listening"` log line. */
const listeningPort = (out) => {
  const line = out.split('\n').find((l) => l.includes('"listening"'));
  return line ? new URL(JSON.parse(line).url).port : undefined;
};

/**
 * Starters of every kind of server, on the run's fixtures; `cpuProf` profiles `serve` under
 * Node; `baselineNode` runs the baseline checkout (the bench's own node unless told);
 * `nodeOptions` and `baselineNodeOptions` are the NODE_OPTIONS of each `serve`, if any.
 */
export function createServers({
  fixtures,
  cpuProf,
  baselineNode = process.execPath,
  nodeOptions,
  baselineNodeOptions,
}) {
  const withNodeOptions = (options) => (options === undefined ? {} : { NODE_OPTIONS: options });
  const { dir, pki, apiKey, auth, serviceEnv } = fixtures;

  /** `serve` reading `caseStore`, under `runtime` (scripts/runtimes.mjs), with `overrides`. */
  /** `serve` on `caseStore`; `ready` reads the port to report from its output (the main listener's unless told). */
  const startService = (caseStore, overrides = {}, runtime = NODE, ready = listeningPort) =>
    startProcess(
      runtime.command,
      [
        ...runtime.args,
        ...(cpuProf && runtime === NODE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []),
        'bin/case-read.js',
        'serve',
      ],
      // The bench stops each service at once: no balancer to wait for.
      {
        ...serviceEnv(caseStore, overrides),
        ...(runtime === NODE ? withNodeOptions(nodeOptions) : {}),
        LOG_LEVEL: 'info',
        SHUTDOWN_DELAY_MS: '0',
      },
      ready,
    );

  /** bench/bare-server.mjs (or `script`, e.g. bench/hono-server.mjs) answering `bodyFile`. */
  const startBare = (bodyFile, script = 'bench/bare-server.mjs') =>
    startProcess(
      process.execPath,
      [
        join(ROOT, script),
        JSON.stringify({
          bodyFile,
          apiKey,
          cert: join(pki, 'server.pem'),
          key: join(pki, 'server-key.pem'),
          ca: join(pki, 'ca.pem'),
        }),
      ],
      { PATH: process.env.PATH },
      (out) => out.match(/"port":(\d+)/)?.[1],
    );

  /**
   * The baseline checkout's own stores, made once by its own CLI (an older checkout refuses a
   * store a newer one has migrated): its case store from its own fixtures (the bench's case is
   * in every version of them), its access store, and an API key for the bench client.
   */
  let baselineStores;
  function baselineStoresOf(checkout) {
    if (baselineStores) return baselineStores;
    const store = `sqlite:${join(dir, 'access-baseline.db')}`;
    const caseStore = `sqlite:${join(dir, 'cases-baseline.db')}`;
    const cli = (args) =>
      execFileSync(baselineNode, [join(checkout, 'bin/case-read.js'), ...args], {
        env: { PATH: process.env.PATH },
        encoding: 'utf8',
      });
    const cliOf = (args) => cli([...args, '--access-store', store]);
    cli(['cases', 'import', join(checkout, 'fixtures/cases.json'), '--store', caseStore]);
    cliOf([
      'clients',
      'add',
      'bench-client',
      '--permissions',
      grantsOf(checkout, baselineNode).join(','),
      '--queue-arn',
      'arn:aws:sqs:eu-west-2:000000000000:bench-queue',
    ]);
    baselineStores = {
      store,
      caseStore,
      headers: { ...auth, 'x-api-key': cliOf(['keys', 'issue', 'bench-client']).trim() },
    };
    return baselineStores;
  }

  /**
   * `serve` from another built checkout (its node_modules in place), on the same PKI and
   * settings, with stores of its own made by its own CLI: the commit before, measured in the
   * same alternating run. Its requests carry its own API key (`headers`). `caseStore` and
   * `overrides` point it elsewhere, e.g. at an upstream (its access store stays its own).
   */
  async function startBaseline(checkout, { caseStore: otherCases, overrides = {} } = {}) {
    const { store, caseStore, headers } = baselineStoresOf(checkout);
    const started = await startProcess(
      baselineNode,
      [join(checkout, 'bin/case-read.js'), 'serve'],
      {
        ...serviceEnv(otherCases ?? caseStore, overrides),
        ACCESS_STORE: store,
        ...withNodeOptions(baselineNodeOptions),
        LOG_LEVEL: 'info',
        SHUTDOWN_DELAY_MS: '0',
      },
      listeningPort,
    );
    return { ...started, headers };
  }

  return { startService, startBare, startBaseline };
}
