// scale: the same lookup against a store of 1,000 generated cases and one of a million
// (2,000 under --smoke), in SQLite or (--postgres) PostgreSQL.
import { join } from 'node:path';
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function scale({ options, settings, fixtures, shared, servers, alternate }) {
  const { dir, auth, caseRead } = fixtures;
  const { onPostgres } = options;
  const small = onPostgres ? shared.pgStore('small') : `sqlite:${join(dir, 'small.db')}`;
  const large = onPostgres ? shared.pgStore('large') : `sqlite:${join(dir, 'large.db')}`;
  await caseRead(['cases', 'generate', '--count', '1000', '--store', small, '--seed', '7']);
  const started = performance.now();
  await caseRead([
    'cases',
    'generate',
    '--count',
    String(settings.scaleCount),
    '--store',
    large,
    '--seed',
    '7',
  ]);
  process.stdout.write(
    `generated ${settings.scaleCount} cases in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  const a = await servers.startService(small);
  const b = await servers.startService(large);
  try {
    const targets = [
      { name: 'small', port: a.port, child: a.child },
      { name: 'large', port: b.port, child: b.child },
    ];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/A000500',
      headers: auth,
    }));
    const ratio = Math.round((totals.large.p99 / Math.max(totals.small.p99, 1)) * 100) / 100;
    const p50Ratio = Math.round((totals.large.p50 / Math.max(totals.small.p50, 1)) * 100) / 100;
    process.stdout.write(
      `${fmt('small', totals.small)}\n${fmt('large', totals.large)}\np50 ratio large/small ${p50Ratio}\np99 ratio large/small ${ratio}\n`,
    );
    return {
      scenario: 'scale',
      caseStore: onPostgres ? 'postgres' : 'sqlite',
      cases: { small: 1000, large: settings.scaleCount },
      rounds,
      totals,
      p50Ratio,
      ratio,
      ratioOf: 'p99 large/small',
    };
  } finally {
    await stop(a.child);
    await stop(b.child);
  }
}
