// engines: the same request (`GET /case/X123456`, the whole pipeline) against two
// configurations: every store local (SQLite cases, access and audit; rate-limit counts in
// process) and every store shared (PostgreSQL cases, access and audit; rate-limit counts in
// Redis), with the server's CPU time per request.
import { join } from 'node:path';
import { ROOT } from '../lib/paths.mjs';
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function engines({ fixtures, shared, servers, alternate }) {
  const { caseRead, addBenchClient, apiKey, token } = fixtures;
  const cases = shared.pgStore('cases');
  await caseRead(['cases', 'import', join(ROOT, 'fixtures/cases.json'), '--store', cases]);
  const access = shared.pgStore('access');
  await addBenchClient(access);
  const [pgKey] = await caseRead(['keys', 'issue', 'bench-client', '--access-store', access]);
  const local = await servers.startService(fixtures.cases);
  const remote = await servers.startService(cases, {
    ACCESS_STORE: access,
    AUDIT_STORE: shared.pgStore('audit'),
    RATE_LIMIT_STORE: shared.redisUrl,
    RATE_LIMIT_PREFIX: `${shared.runId}:`,
  });
  try {
    const targets = [
      { name: 'local', port: local.port, child: local.child, key: apiKey },
      { name: 'shared', port: remote.port, child: remote.child, key: pgKey },
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: { 'x-api-key': t.key, authorization: `Bearer ${token}` },
    }));
    const cpuRatio = Math.round((totals.shared.cpuUsPerRequest / totals.local.cpuUsPerRequest) * 100) / 100;
    process.stdout.write(
      `${fmt('local', totals.local)}\n${fmt('shared', totals.shared)}\ncpu per request shared/local ${cpuRatio}\n`,
    );
    return { scenario: 'engines', rounds, totals, cpuRatio, ratio: null };
  } finally {
    await stop(local.child);
    await stop(remote.child);
  }
}
