// upstream: the added cost of reading cases from an upstream. `sqlite` is a service reading
// its SQLite file; `upstream` is a second service whose case store is the first, over HTTPS
// with the bench client's certificate, an API key and a bearer token (every upstream call is
// a full request through the first service's perimeter). Measured at one connection and at
// the run's connections.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function upstream({ settings, fixtures, servers, alternate }) {
  const { dir, pki, apiKey, token, auth } = fixtures;
  const origin = await servers.startService(fixtures.cases);
  const secrets = join(dir, 'upstream-secrets');
  mkdirSync(secrets, { recursive: true });
  writeFileSync(join(secrets, 'api-key'), apiKey, { mode: 0o600 });
  writeFileSync(join(secrets, 'bearer'), token, { mode: 0o600 });
  const front = await servers.startService(`https://localhost:${origin.port}`, {
    UPSTREAM_TLS_CERT: join(pki, 'bench-client.pem'),
    UPSTREAM_TLS_KEY: join(pki, 'bench-client-key.pem'),
    UPSTREAM_TLS_CA: join(pki, 'ca.pem'),
    UPSTREAM_API_KEY_FILE: join(secrets, 'api-key'),
    UPSTREAM_BEARER_FILE: join(secrets, 'bearer'),
  });
  try {
    const targets = [
      { name: 'sqlite', port: origin.port, child: origin.child },
      { name: 'upstream', port: front.port, child: front.child },
    ];
    const request = (t) => ({ port: t.port, path: '/case/X123456', headers: auth });
    // One connection: the latency a single request gains, with no queueing in it.
    process.stdout.write('one connection:\n');
    const single = await alternate(targets, request, 1);
    process.stdout.write(`${settings.connections} connections:\n`);
    const { rounds, totals } = await alternate(targets, request);
    const p50 = (t) => Math.round((t.upstream.p50 - t.sqlite.p50) * 10) / 10;
    // At one connection the mean latency is 1 / throughput, finer than autocannon's 1 ms.
    const mean = (t) => Math.round((1000 / t.upstream.reqPerSec - 1000 / t.sqlite.reqPerSec) * 100) / 100;
    const cpu = Math.round((totals.upstream.cpuUsPerRequest / totals.sqlite.cpuUsPerRequest) * 100) / 100;
    process.stdout.write(
      `one connection: ${fmt('sqlite', single.totals.sqlite)}\none connection: ${fmt('upstream', single.totals.upstream)}\n${fmt('sqlite', totals.sqlite)}\n${fmt('upstream', totals.upstream)}\nadded latency ${mean(single.totals)} ms (mean, one connection); added p50 ${p50(totals)} ms at ${settings.connections} connections; cpu per request upstream/sqlite ${cpu}\n`,
    );
    return {
      scenario: 'upstream',
      single: single.totals,
      rounds,
      totals,
      addedMeanMsOneConnection: mean(single.totals),
      addedP50Loaded: p50(totals),
      ratio: null,
    };
  } finally {
    await stop(front.child);
    await stop(origin.child);
  }
}
