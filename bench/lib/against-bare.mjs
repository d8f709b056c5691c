// The body of the keepalive and handshake scenarios: the full service against a bare
// node:https server and bare Hono answering the service's own response body (and, with
// --baseline, `serve` from another checkout), in alternating rounds.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetchBody, load } from './load.mjs';
import { stop } from './processes.mjs';
import { fmt } from './report.mjs';

/** `GET /case/X123456` against each server, keep-alive or (`reconnect`) a handshake per request. */
export async function againstBare(bench, name, { reconnect }) {
  const { fixtures, servers, alternate, options } = bench;
  const { dir, auth, tls } = fixtures;
  const service = await servers.startService(fixtures.cases);
  const sample = await load({
    port: service.port,
    path: '/case/X123456',
    headers: auth,
    durationS: 0.2,
    connections: 1,
    tls,
  });
  if (sample.non2xx > 0) throw new Error('the service did not answer 200 to the benchmark request');
  const body = await fetchBody({ port: service.port, path: '/case/X123456', headers: auth, tls });
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, body);
  const bare = await servers.startBare(bodyFile);
  const hono = await servers.startBare(bodyFile, 'bench/hono-server.mjs');
  const checkout = options.baselineCheckout;
  const baseline = checkout ? await servers.startBaseline(checkout) : undefined;
  try {
    const targets = [
      { name: 'bare', port: bare.port, child: bare.child },
      { name: 'hono', port: hono.port, child: hono.child },
      { name: 'service', port: service.port, child: service.child },
      ...(baseline
        ? [{ name: 'baseline', port: baseline.port, child: baseline.child, headers: baseline.headers }]
        : []),
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? auth,
      reconnect,
    }));
    const ratio = Math.round((totals.service.reqPerSec / totals.bare.reqPerSec) * 100) / 100;
    const p99Ratio = Math.round((totals.service.p99 / Math.max(totals.bare.p99, 1)) * 100) / 100;
    // Server CPU per request does not depend on which side saturates first; req/s does.
    const cpuRatio =
      Math.round((totals.bare.cpuUsPerRequest / Math.max(1, totals.service.cpuUsPerRequest)) * 100) / 100;
    // What the service costs against bare Hono on the same TLS: hono µs / service µs (1 would
    // be the framework alone). The framework's own cost against node:https is bare / hono.
    const honoCpuRatio =
      Math.round((totals.hono.cpuUsPerRequest / Math.max(1, totals.service.cpuUsPerRequest)) * 100) / 100;
    const frameworkCpuRatio =
      Math.round((totals.bare.cpuUsPerRequest / Math.max(1, totals.hono.cpuUsPerRequest)) * 100) / 100;
    // This checkout's service against the baseline's: CPU per request, below 1 is lighter.
    const baselineCpuRatio = baseline
      ? Math.round((totals.service.cpuUsPerRequest / Math.max(1, totals.baseline.cpuUsPerRequest)) * 1000) /
        1000
      : null;
    process.stdout.write(
      `${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\np99 ratio ${p99Ratio}\nhono cpu ratio ${honoCpuRatio}\nframework cpu ratio ${frameworkCpuRatio}\n${name} ratio ${ratio}\ncpu ratio ${cpuRatio}\n${
        baseline ? `cpu per request service/baseline ${baselineCpuRatio}\n` : ''
      }`,
    );
    return {
      scenario: name,
      bodyBytes: body.length,
      rounds,
      totals,
      p99Ratio,
      ratio,
      cpuRatio,
      honoCpuRatio,
      frameworkCpuRatio,
      baselineCpuRatio,
    };
  } finally {
    if (baseline) await stop(baseline.child);
    await stop(hono.child);
    await stop(bare.child);
    await stop(service.child);
  }
}
