// token: `POST /token` (API key only, no bearer) on one service.
import { stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export async function token({ fixtures, servers, alternate }) {
  const service = await servers.startService(fixtures.cases);
  try {
    const targets = [{ name: 'token', port: service.port, child: service.child }];
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/token',
      method: 'POST',
      headers: { 'x-api-key': fixtures.apiKey },
    }));
    process.stdout.write(`${fmt('token', totals.token)}\n`);
    return { scenario: 'token', rounds, totals, ratio: null };
  } finally {
    await stop(service.child);
  }
}
