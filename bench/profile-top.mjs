// node bench/profile-top.mjs FILE.cpuprofile [--top N] [--by function|file|part]
//
// The self-time frames of a V8 CPU profile (`npm run bench -- keepalive --cpu-prof` writes
// one for the service, `node --cpu-prof bench/app-loop.mjs` one for the app in-process), as a
// share of the busy time: idle time (`(idle)`, `(program)`) is left out, so the shares say
// where the process's own time goes. `--by file` adds the frames up per file, which is how a
// cut is judged. `--by part` adds them up per part of a request (PARTS below: the table of
// docs/performance.md, from an app-loop profile). The profile samples the main thread's wall clock: a blocking system call
// (a pread, an fsync) counts as busy.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const IDLE = new Set(['(idle)', '(program)']);
const shorten = (url) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'node_modules/')
    .replace(/^.*\/dist\//, 'dist/');

/**
 * The parts of a request, each the frames that are its own, the first that matches counting.
 * A frame is named for matching as `lib:NAME/PATH` (a package), `ours:PATH` (this project's
 * dist/), `node:…` (Node's own), `bench:…` or `native:FUNCTION`. Garbage collection and
 * promise turns are everyone's.
 */
const PARTS = [
  ['bench harness (socket stand-in)', /^bench:/],
  [
    'audit append (record, hash chain, SQLite insert and commit)',
    /^ours:(adapters\/(sqlite\/audit-log|shared\/(audit-chain|audit-tree|group-commit|sha256))|domain\/audit\/)|^lib:better-sqlite3\/|^node:internal\/crypto\/hash/,
  ],
  [
    'perimeter (identity, key, client, revocation, rate limit, bearer, permission)',
    /^ours:(adapters\/(http\/(perimeter|identity)|sqlite\/access-directory|shared\/access-cache|memory\/rate-limiter|jose\/|crypto\/|tls-listener\/)|domain\/access\/|ports\/clock)|^lib:lru-cache\/|^native:RegExp: \^Bearer/,
  ],
  [
    'case read (SQLite, limited access)',
    /^ours:(adapters\/(sqlite\/(case-store|database|driver)|http\/(cases\.handlers|case-reader))|domain\/(use-cases|crn))/,
  ],
  [
    'request cycle, response, access log, metrics',
    /^ours:(adapters\/(http|pino|prometheus)\/|app\/)|^lib:(prom-client|pino|sonic-boom)\/|^node:internal\/crypto\/random/,
  ],
  ['framework (Hono, zod, @hono/node-server)', /^lib:(hono|@hono\/[^/]+|zod)\//],
  ['Node HTTP, streams and buffers', /^node:|^native:(writeString|utf8Write|FastBuffer|RegExp: )/],
  ['garbage collection', /^native:\(garbage collector\)$/],
  ['promise turns', /^native:(runMicrotasks|\(anonymous\))$/],
];

/** The part of a request a frame belongs to (see PARTS). */
function partOf(frame) {
  const url = frame.url.replace(/^file:\/\//, '');
  let name;
  if (!url) name = `native:${frame.functionName || '(anonymous)'}`;
  else if (url.startsWith('node:')) name = url;
  else if (url.includes('/node_modules/')) name = `lib:${url.slice(url.lastIndexOf('/node_modules/') + 14)}`;
  else if (url.includes('/dist/')) name = `ours:${url.slice(url.lastIndexOf('/dist/') + 6)}`;
  else if (url.includes('/bench/')) name = `bench:${url.slice(url.lastIndexOf('/bench/') + 7)}`;
  else name = url;
  return PARTS.find(([, pattern]) => pattern.test(name))?.[0] ?? 'other';
}

/** The top `top` self-time frames of the profile in `file`, by function (with line), by file or by part. */
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
    if (by === 'part') return partOf(frame);
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
      'usage: node bench/profile-top.mjs FILE.cpuprofile [--top N] [--by function|file|part]\n',
    );
    process.exit(2);
  }
  const flag = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
  };
  const by = flag('--by', 'function');
  if (!['function', 'file', 'part'].includes(by)) {
    process.stderr.write(`profile-top: --by takes function, file or part, not ${by}\n`);
    process.exit(2);
  }
  process.stdout.write(`${profileTop(file, { top: Number(flag('--top', '25')), by }).join('\n')}\n`);
}
