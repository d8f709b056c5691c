// runtimes: the same request (`GET /case/X123456`, the whole pipeline, keep-alive) against
// `serve` under each runtime (Node, Bun and Deno, the devDependencies): the same stores, each
// with its own audit file, with each one's CPU time per request.
import { RUNTIMES } from '../../scripts/runtimes.mjs';
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function runtimes({ fixtures, servers, alternate }) {
  const services = [];
  try {
    for (const runtime of RUNTIMES) {
      const started = await servers.startService(fixtures.cases, {}, runtime);
      services.push({ name: runtime.name, ...started });
    }
    const targets = services.map((s) => ({ name: s.name, port: s.port, child: s.child, headers: s.headers }));
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? fixtures.auth,
    }));
    process.stdout.write(`${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\n`);
    return { scenario: 'runtimes', rounds, totals, ratio: null };
  } finally {
    for (const s of services) await stop(s.child);
  }
}
