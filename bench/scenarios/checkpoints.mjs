// checkpoints: what signed audit checkpoints cost. `GET /case/X123456` (keep-alive) against
// the service without a signing key, with one at the default interval (1000 records or 60 s)
// and with one every 100 records, alternating, with the server's CPU time per request and
// the checkpoints each signed.
import { join } from 'node:path';
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function checkpoints({ fixtures, servers, alternate }) {
  const { dir, caseRead } = fixtures;
  const keyDir = join(dir, 'audit-key');
  await caseRead(['audit', 'keygen', '--dir', keyDir]);
  const key = { AUDIT_SIGNING_KEY: join(keyDir, 'audit-signing-key.pem') };
  const trail = (name) => `sqlite:${join(dir, `audit-checkpoints-${name}.db`)}`;
  const services = [];
  let stopped = false;
  try {
    for (const [name, extra] of [
      ['off', {}],
      ['on', key],
      ['on-100', { ...key, AUDIT_CHECKPOINT_RECORDS: '100' }],
    ]) {
      const started = await servers.startService(fixtures.cases, { ...extra, AUDIT_STORE: trail(name) });
      services.push({ name, ...started });
    }
    const targets = services.map((s) => ({ name: s.name, port: s.port, child: s.child, headers: s.headers }));
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? fixtures.auth,
    }));
    // Stopped before counting: each signs a last checkpoint as it shuts down.
    for (const s of services) await stop(s.child);
    stopped = true;
    const ratio = (a, b) => Math.round((totals[a].cpuUsPerRequest / totals[b].cpuUsPerRequest) * 100) / 100;
    const cpuRatio = ratio('on', 'off');
    const signed = {};
    for (const name of ['on', 'on-100']) {
      signed[name] = (
        await caseRead(['audit', 'checkpoints', '--json', '--audit-store', trail(name)])
      ).length;
    }
    process.stdout.write(
      `${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\ncpu per request on/off ${cpuRatio}, on-100/off ${ratio('on-100', 'off')}\ncheckpoints signed: ${JSON.stringify(signed)}\n`,
    );
    return { scenario: 'checkpoints', rounds, totals, cpuRatio, signed, ratio: null };
  } finally {
    if (!stopped) for (const s of services) await stop(s.child);
  }
}
