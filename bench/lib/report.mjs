// What the bench prints and writes: the heading, a server's line, the top of the newest CPU
// profile, the results file and the closing ratio lines.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { profileTop } from '../profile-top.mjs';
import { PROFILE_DIR, RESULTS_DIR } from './paths.mjs';

const write = (text) => process.stdout.write(text);

/** One server's line: req/s, p50, p99, RSS, and CPU, generator CPU and failures when known. */
export const fmt = (label, s) =>
  `${label.padEnd(9)} ${String(s.reqPerSec).padStart(7)} req/s  p50 ${String(s.p50).padStart(4)} ms  p99 ${String(s.p99).padStart(4)} ms  rss ${s.rssMiB} MiB${s.cpuUsPerRequest !== undefined ? `  cpu ${s.cpuUsPerRequest} µs/req` : ''}${s.generatorCpu !== undefined ? `  generator ${Math.round(s.generatorCpu * 100)}% of a core` : ''}${s.non2xx || s.errors ? `  (non-2xx ${s.non2xx}, errors ${s.errors})` : ''}`;

/** The two heading lines: what runs, how long, and the service's pipeline. */
export function printHeading({ selected, smoke, auditKind, settings }) {
  write(
    `bench: ${selected.join(', ')}${smoke ? ' (smoke: short, nothing is judged)' : ''}; ${settings.rounds} round(s) of ${settings.durationS}s, ${settings.connections} connections, node ${process.version}\n`,
  );
  write(
    `service pipeline: mTLS, API key, rate limit (memory), bearer (required), permission, SQLite lookup, audit (${auditKind === 'jsonl' ? 'JSONL' : 'SQLite'})\n`,
  );
}

/** The top self-time costs of the newest CPU profile, by file and by function (bench/profile-top.mjs). */
export function printProfile() {
  if (!existsSync(PROFILE_DIR)) return;
  const files = readdirSync(PROFILE_DIR).filter((f) => f.endsWith('.cpuprofile'));
  const newest = files
    .map((f) => join(PROFILE_DIR, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) return;
  write(
    `profile ${newest}\n${profileTop(newest, { by: 'file', top: 12 }).join('\n')}\n${profileTop(newest, { top: 20 }).join('\n')}\n`,
  );
}

/** bench/results/TIME[-smoke].json, then `wrote FILE`. */
export function writeResults({ smoke, settings, results }) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(
    RESULTS_DIR,
    `${new Date().toISOString().replaceAll(':', '-')}${smoke ? '-smoke' : ''}.json`,
  );
  writeFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), smoke, settings, node: process.version, results }, null, 2)}\n`,
  );
  write(`\nwrote ${file}\n`);
}

/**
 * The last lines: the service/bare throughput ratio and CPU ratio (bare µs per request /
 * service µs per request) of the first scenario that compares them.
 */
export function printHeadline(results) {
  const headline = results.find((r) => r.scenario === 'keepalive' || r.scenario === 'handshake');
  write(`ratio ${headline?.ratio ?? 'n/a'}\ncpu ratio ${headline?.cpuRatio ?? 'n/a'}\n`);
}
