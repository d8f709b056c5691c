// limited: the cost of deciding limited access, on one service (SQLite, the fixtures):
// `GET /case/X123456` (a case without rules) against `GET /case/L000001` (a case with rules,
// answered to the bench client acting as itself under `allow`, so both are 200 and both take
// the stored-text path), alternating, with the server's CPU time per request.
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function limited({ fixtures, servers, alternate }) {
  const { access, auth, caseRead } = fixtures;
  await caseRead([
    'clients',
    'update',
    'bench-client',
    '--limited-access',
    'allow',
    '--access-store',
    access,
  ]);
  const service = await servers.startService(fixtures.cases);
  try {
    const targets = [
      { name: 'no-rules', port: service.port, child: service.child, path: '/case/X123456' },
      { name: 'rules', port: service.port, child: service.child, path: '/case/L000001' },
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: t.path,
      headers: auth,
    }));
    const cpuRatio =
      Math.round((totals.rules.cpuUsPerRequest / totals['no-rules'].cpuUsPerRequest) * 100) / 100;
    process.stdout.write(
      `${fmt('no-rules', totals['no-rules'])}\n${fmt('rules', totals.rules)}\ncpu per request rules/no-rules ${cpuRatio}\n`,
    );
    return { scenario: 'limited', rounds, totals, cpuRatio, ratio: null };
  } finally {
    await stop(service.child);
    await caseRead([
      'clients',
      'update',
      'bench-client',
      '--limited-access',
      'deny',
      '--access-store',
      access,
    ]);
  }
}
