// tls-stores: the same request (`GET /case/X123456`, the whole pipeline) against two services
// on the same shared engines (PostgreSQL cases, access and audit; rate-limit counts in Redis),
// one reaching them in plaintext and one over TLS with the server verified (sslmode=verify-full,
// rediss://), with the server's CPU time per request. Each pooled connection makes its
// handshake once, so the request path should cost the same either way (issue 47).
import { join } from 'node:path';
import { ROOT } from '../lib/paths.mjs';
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';
import { startTlsEngines } from '../lib/tls-engines.mjs';

export async function tlsStores({ fixtures, servers, alternate }) {
  const { caseRead, addBenchClient, token } = fixtures;
  const engines = await startTlsEngines();
  const store = (schema, tls) =>
    `${engines.postgresUrl}?schema=${schema}${tls ? `&${engines.postgresTls}` : ''}`;
  const started = [];
  try {
    await caseRead(['cases', 'import', join(ROOT, 'fixtures/cases.json'), '--store', store('cases', false)]);
    await addBenchClient(store('access', false));
    const [key] = await caseRead(['keys', 'issue', 'bench-client', '--access-store', store('access', false)]);
    const serviceOn = async (tls) => {
      const service = await servers.startService(store('cases', tls), {
        ACCESS_STORE: store('access', tls),
        // Each its own trail: two chains appended at once would wait on each other's lock.
        AUDIT_STORE: store(tls ? 'audit_tls' : 'audit_plain', tls),
        RATE_LIMIT_STORE: tls ? engines.redisTlsUrl : engines.redisUrl,
        ...(tls ? { RATE_LIMIT_TLS_CA: engines.ca } : {}),
        RATE_LIMIT_PREFIX: tls ? 'bench-tls:' : 'bench-plain:',
      });
      started.push(service.child);
      return service;
    };
    const plain = await serviceOn(false);
    const tls = await serviceOn(true);
    const targets = [
      { name: 'plaintext', port: plain.port, child: plain.child },
      { name: 'tls', port: tls.port, child: tls.child },
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: { 'x-api-key': key, authorization: `Bearer ${token}` },
    }));
    const cpuRatio = Math.round((totals.tls.cpuUsPerRequest / totals.plaintext.cpuUsPerRequest) * 100) / 100;
    // Each connection open now made one handshake: a few, for every request of the run.
    const handshakes = await engines.tlsConnections();
    process.stdout.write(
      `${fmt('plaintext', totals.plaintext)}\n${fmt('tls', totals.tls)}\ncpu per request tls/plaintext ${cpuRatio}\n` +
        `TLS connections open to PostgreSQL ${handshakes.postgres}, to Redis ${handshakes.redis}: one handshake each\n`,
    );
    return { scenario: 'tls-stores', rounds, totals, cpuRatio, ratio: null };
  } finally {
    for (const child of started) await stop(child);
    engines.stop();
  }
}
