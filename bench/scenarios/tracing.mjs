// tracing: what tracing costs. `GET /case/X123456` (the whole pipeline, keep-alive) against
// the service with tracing off, on (every span exported, parent-based and always on, over
// OTLP/HTTP protobuf to a sink in this process that only counts bytes) and on with nothing
// sampled, with each one's CPU time per request; --baseline DIR (BENCH_BASELINE=DIR) adds
// `serve` from another built checkout (e.g. a commit before tracing existed), to show what
// "off" costs.
import { createServer } from 'node:http';
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function tracing({ options, fixtures, servers, alternate }) {
  let exportedBytes = 0;
  const sink = createServer((req, res) => {
    req.on('data', (chunk) => {
      exportedBytes += chunk.length;
    });
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${sink.address().port}`;
  const services = [];
  try {
    services.push({ name: 'off', ...(await servers.startService(fixtures.cases)) });
    services.push({
      name: 'on',
      ...(await servers.startService(fixtures.cases, {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      })),
    });
    // On, but nothing sampled: what the context manager, the wrappers and unrecorded spans cost.
    services.push({
      name: 'unsampled',
      ...(await servers.startService(fixtures.cases, {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_TRACES_SAMPLER: 'always_off',
      })),
    });
    const baseline = options.baselineCheckout;
    if (baseline) services.push({ name: 'baseline', ...(await servers.startBaseline(baseline)) });
    const targets = services.map((s) => ({ name: s.name, port: s.port, child: s.child, headers: s.headers }));
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? fixtures.auth,
    }));
    const ratio = (a, b) => Math.round((totals[a].cpuUsPerRequest / totals[b].cpuUsPerRequest) * 100) / 100;
    const cpuRatio = ratio('on', 'off');
    process.stdout.write(
      `${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\ncpu per request on/off ${cpuRatio}, unsampled/off ${ratio('unsampled', 'off')}${
        baseline ? `, off/baseline ${ratio('off', 'baseline')}` : ''
      }\nexported ${Math.round(exportedBytes / 1024)} KiB of spans\n`,
    );
    return { scenario: 'tracing', rounds, totals, cpuRatio, exportedBytes, ratio: null };
  } finally {
    for (const s of services) await stop(s.child);
    sink.close();
  }
}
