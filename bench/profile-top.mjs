// node bench/profile-top.mjs FILE.cpuprofile [--top N] [--by function|file]
//
// The self-time frames of a V8 CPU profile (`npm run bench -- keepalive --cpu-prof` writes
// one for the service, `node --cpu-prof bench/app-loop.mjs` one for the app in-process), as a
// share of the busy time: idle time (`(idle)`, `(program)`) is left out, so the shares say
// where the process's own time goes. `--by file` adds the frames up per file, which is how a
// cut is judged. The profile samples the main thread's wall clock: a blocking system call
// (a pread, an fsync) counts as busy.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const IDLE = new Set(['(idle)', '(program)']);
const shorten = (url) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'node_modules/')
    .replace(/^.*\/dist\//, 'dist/');

/** The top `top` self-time frames of the profile in `file`, by function (with line) or by file. */
export function profileTop(file, { top = 25, by = 'function' } = {}) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const hits = new Map();
  // timeDeltas[i] is the time before samples[i]: weigh each sample by the time it stands for.
  profile.samples.forEach((id, i) => {
    hits.set(id, (hits.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });
  const keyOf = (frame) => {
    const where = frame.url ? shorten(frame.url) : '(native)';
    if (by === 'file') return frame.url ? where : frame.functionName || '(anonymous)';
    return `${frame.functionName || '(anonymous)'} ${where}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
  };
  const totals = new Map();
  let busy = 0;
  let all = 0;
  for (const [id, us] of hits) {
    const frame = byId.get(id).callFrame;
    all += us;
    if (IDLE.has(frame.functionName)) continue;
    busy += us;
    const key = keyOf(frame);
    totals.set(key, (totals.get(key) ?? 0) + us);
  }
  const rows = [...totals].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `${(busy / 1e6).toFixed(2)} s busy of ${(all / 1e6).toFixed(2)} s profiled; share of busy time, by ${by}`,
    ...rows.map(([key, us]) => `${((100 * us) / busy).toFixed(1).padStart(5)}%  ${key}`),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const file = args.find((a, i) => !a.startsWith('--') && !['--top', '--by'].includes(args[i - 1]));
  if (!file) {
    process.stderr.write(
      'usage: node bench/profile-top.mjs FILE.cpuprofile [--top N] [--by function|file]\n',
    );
    process.exit(2);
  }
  const flag = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
  };
  const by = flag('--by', 'function');
  if (!['function', 'file'].includes(by)) {
    process.stderr.write(`profile-top: --by takes function or file, not ${by}\n`);
    process.exit(2);
  }
  process.stdout.write(`${profileTop(file, { top: Number(flag('--top', '25')), by }).join('\n')}\n`);
}
