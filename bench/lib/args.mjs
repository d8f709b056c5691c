// The command line: `npm run bench -- SCENARIO... [--smoke] [--audit sqlite|jsonl] [--rounds N]
// [--baseline DIR [--baseline-node PATH] [--baseline-node-options S]] [--node-options S] [--cpu-prof]
// [--postgres]`, and the load settings it implies.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** A command line the bench refuses; run.mjs prints `bench: MESSAGE` and exits 2. */
export class UsageError extends Error {}

/** The settings of a run: smoke is short and light, nothing in it is judged. */
const settingsOf = (smoke, roundsOverride) =>
  smoke
    ? { rounds: 1, durationS: 0.5, warmupS: 0.25, connections: 8, handshakeConnections: 4, scaleCount: 2_000 }
    : {
        rounds: roundsOverride ?? 3,
        durationS: 10,
        warmupS: 3,
        connections: 64,
        handshakeConnections: 16,
        scaleCount: 1_000_000,
      };

/**
 * The options of `args` (process.argv.slice(2)), checked in this order: --audit, --rounds,
 * --baseline, then every scenario against `known`. Throws UsageError.
 */
export function parseArgs(args, known, env = process.env) {
  const flagValue = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const smoke = args.includes('--smoke');
  const auditKind = flagValue('--audit') ?? 'sqlite';
  if (!['sqlite', 'jsonl'].includes(auditKind)) {
    throw new UsageError(`--audit takes sqlite or jsonl, not ${auditKind}`);
  }
  const roundsOverride = flagValue('--rounds') === undefined ? undefined : Number(flagValue('--rounds'));
  if (roundsOverride !== undefined && !(Number.isInteger(roundsOverride) && roundsOverride > 0)) {
    throw new UsageError('--rounds takes a whole number above 0');
  }
  // Another built checkout to measure against, in the same alternating rounds: --baseline DIR
  // (or BENCH_BASELINE=DIR).
  const baselineCheckout = flagValue('--baseline') ?? env.BENCH_BASELINE;
  if (baselineCheckout !== undefined && !existsSync(join(baselineCheckout, 'dist/app/cli.js'))) {
    throw new UsageError(
      `--baseline ${baselineCheckout} is no built checkout (run npm ci and npm run build there)`,
    );
  }
  // The node binary that runs the baseline (another Node line, say); the bench's own unless told.
  const baselineNode = flagValue('--baseline-node') ?? env.BENCH_BASELINE_NODE;
  if (baselineNode !== undefined && baselineCheckout === undefined) {
    throw new UsageError('--baseline-node goes with --baseline');
  }
  if (baselineNode !== undefined && !existsSync(baselineNode)) {
    throw new UsageError(`--baseline-node ${baselineNode} does not exist`);
  }
  // NODE_OPTIONS for `serve` (the image's setting, say) and for the baseline's.
  const nodeOptions = flagValue('--node-options');
  const baselineNodeOptions = flagValue('--baseline-node-options');
  if (baselineNodeOptions !== undefined && baselineCheckout === undefined) {
    throw new UsageError('--baseline-node-options goes with --baseline');
  }
  const valued = [
    '--audit',
    '--rounds',
    '--baseline',
    '--baseline-node',
    '--node-options',
    '--baseline-node-options',
  ];
  const scenarios = args.filter((a, i) => !a.startsWith('--') && !valued.includes(args[i - 1]));
  for (const s of scenarios) {
    if (!known.includes(s)) {
      throw new UsageError(`unknown scenario ${s}; expected some of ${known.join(', ')}`);
    }
  }
  return {
    smoke,
    auditKind,
    cpuProf: args.includes('--cpu-prof'),
    baselineCheckout,
    baselineNode: baselineNode ?? process.execPath,
    nodeOptions,
    baselineNodeOptions,
    onPostgres: args.includes('--postgres'),
    selected: scenarios.length > 0 ? scenarios : ['keepalive'],
    settings: settingsOf(smoke, roundsOverride),
  };
}
