#!/usr/bin/env node
// node bench/app-loop-pairs.mjs --baseline DIR [--baseline-node PATH] [--pairs N] [-- APP-LOOP ARGS...]
//
// A change to the service's own code judged in process: `bench/app-loop.mjs` run against
// DIR's build (`--dist DIR/dist`, the commit before, built beside this checkout) and this
// checkout's, alternating (base, new, base, new, ...), N pairs (5 unless told). Each run's
// figure is the median of its three rounds; each pair's ratio is new / base. --baseline-node
// runs the baseline's loop on another node binary (another Node line). Prints every
// pair, the medians and how many pairs the change was lower in. Nothing is judged here: the
// figures are read, and go in the commit message.
//
// Build the baseline with, for example:
//   git worktree add /work/base HEAD~1 && ln -s "$PWD/node_modules" /work/base/node_modules
//   (cd /work/base && npx tsc -p tsconfig.build.json)
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const argv = process.argv.slice(2);
const dashes = argv.indexOf('--');
const own = dashes === -1 ? argv : argv.slice(0, dashes);
const passed = dashes === -1 ? [] : argv.slice(dashes + 1);
const optionValue = (name) => (own.includes(name) ? own[own.indexOf(name) + 1] : undefined);
const baseline = optionValue('--baseline') ?? process.env.BENCH_BASELINE;
const baselineNode = optionValue('--baseline-node') ?? process.execPath;
const pairs = Number(optionValue('--pairs') ?? 5);
if (baseline === undefined || !existsSync(join(baseline, 'dist', 'app', 'cli.js'))) {
  process.stderr.write('usage: app-loop-pairs.mjs --baseline DIR [--pairs N] [-- app-loop args]\n');
  process.stderr.write('DIR must be a built checkout (DIR/dist/app/cli.js)\n');
  process.exit(2);
}
if (!existsSync(baselineNode)) {
  process.stderr.write(`--baseline-node ${baselineNode} does not exist\n`);
  process.exit(2);
}
if (!Number.isInteger(pairs) || pairs < 1) {
  process.stderr.write('--pairs takes a whole number of at least 1\n');
  process.exit(2);
}
const loop = new URL('./app-loop.mjs', import.meta.url).pathname;
const run = promisify(execFile);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
async function once(extra, node = process.execPath) {
  const { stdout } = await run(node, [loop, ...passed, ...extra], { maxBuffer: 1 << 20 });
  const rounds = [...stdout.matchAll(/round \d+: ([\d.]+) µs\/req/g)].map((m) => Number(m[1]));
  if (rounds.length !== 3) throw new Error(`app-loop printed no rounds:\n${stdout}`);
  return median(rounds);
}
const results = [];
for (let i = 1; i <= pairs; i++) {
  const base = await once(['--dist', join(resolve(baseline), 'dist')], baselineNode);
  const next = await once([]);
  results.push({ base, next, ratio: next / base });
  process.stdout.write(
    `pair ${i}: base ${base.toFixed(1)} µs/req, this ${next.toFixed(1)} µs/req, ratio ${(next / base).toFixed(3)}\n`,
  );
}
const lower = results.filter((r) => r.ratio < 1).length;
process.stdout.write(
  `median: base ${median(results.map((r) => r.base)).toFixed(1)}, this ${median(results.map((r) => r.next)).toFixed(1)} µs/req; ` +
    `median ratio ${median(results.map((r) => r.ratio)).toFixed(3)}; lower in ${lower} of ${pairs} pairs\n`,
);
