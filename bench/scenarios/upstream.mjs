// upstream: the added cost of reading cases from an upstream. `sqlite` is a service reading
// its SQLite file; `upstream` is a second service whose case store is the first, over HTTPS
// with the bench client's certificate, an API key and a bearer token (every upstream call is
// a full request through the first service's perimeter). Measured at one connection and at
// the run's connections. --baseline DIR adds `baseline`: that checkout's `serve` in front of
// the same first service, so an upstream store's change is measured against the one before.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function upstream({ settings, fixtures, servers, alternate, options }) {
  const { dir, pki, apiKey, token, auth } = fixtures;
  const origin = await servers.startService(fixtures.cases);
  const secrets = join(dir, 'upstream-secrets');
  mkdirSync(secrets, { recursive: true });
  writeFileSync(join(secrets, 'api-key'), apiKey, { mode: 0o600 });
  writeFileSync(join(secrets, 'bearer'), token, { mode: 0o600 });
  const originUrl = `https://localhost:${origin.port}`;
  const upstreamSettings = {
    UPSTREAM_TLS_CERT: join(pki, 'bench-client.pem'),
    UPSTREAM_TLS_KEY: join(pki, 'bench-client-key.pem'),
    UPSTREAM_TLS_CA: join(pki, 'ca.pem'),
    UPSTREAM_API_KEY_FILE: join(secrets, 'api-key'),
    UPSTREAM_BEARER_FILE: join(secrets, 'bearer'),
  };
  const front = await servers.startService(originUrl, upstreamSettings);
  const checkout = options.baselineCheckout;
  const baseline = checkout
    ? await servers.startBaseline(checkout, { caseStore: originUrl, overrides: upstreamSettings })
    : undefined;
  try {
    const targets = [
      { name: 'sqlite', port: origin.port, child: origin.child },
      { name: 'upstream', port: front.port, child: front.child },
      ...(baseline
        ? [{ name: 'baseline', port: baseline.port, child: baseline.child, headers: baseline.headers }]
        : []),
    ];
    const request = (t) => ({ port: t.port, path: '/case/X123456', headers: t.headers ?? auth });
    // One connection: the latency a single request gains, with no queueing in it.
    process.stdout.write('one connection:\n');
    const single = await alternate(targets, request, 1);
    process.stdout.write(`${settings.connections} connections:\n`);
    const { rounds, totals } = await alternate(targets, request);
    const p50 = (t) => Math.round((t.upstream.p50 - t.sqlite.p50) * 10) / 10;
    // At one connection the mean latency is 1 / throughput, finer than autocannon's 1 ms.
    const mean = (t) => Math.round((1000 / t.upstream.reqPerSec - 1000 / t.sqlite.reqPerSec) * 100) / 100;
    const cpu = Math.round((totals.upstream.cpuUsPerRequest / totals.sqlite.cpuUsPerRequest) * 100) / 100;
    // This checkout's upstream store against the baseline's, in front of the same first service.
    const baselineCpuRatio = baseline
      ? Math.round((totals.upstream.cpuUsPerRequest / totals.baseline.cpuUsPerRequest) * 1000) / 1000
      : null;
    process.stdout.write(
      `one connection: ${fmt('sqlite', single.totals.sqlite)}\none connection: ${fmt('upstream', single.totals.upstream)}\n${fmt('sqlite', totals.sqlite)}\n${fmt('upstream', totals.upstream)}\n${
        baseline
          ? `one connection: ${fmt('baseline', single.totals.baseline)}\n${fmt('baseline', totals.baseline)}\n`
          : ''
      }added latency ${mean(single.totals)} ms (mean, one connection); added p50 ${p50(totals)} ms at ${settings.connections} connections; cpu per request upstream/sqlite ${cpu}\n${
        baseline ? `cpu per request upstream/baseline ${baselineCpuRatio}\n` : ''
      }`,
    );
    return {
      scenario: 'upstream',
      single: single.totals,
      rounds,
      totals,
      addedMeanMsOneConnection: mean(single.totals),
      addedP50Loaded: p50(totals),
      baselineCpuRatio,
      ratio: null,
    };
  } finally {
    if (baseline) await stop(baseline.child);
    await stop(front.child);
    await stop(origin.child);
  }
}
