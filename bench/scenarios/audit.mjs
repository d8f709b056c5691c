// audit: audit appends per second, as many as the store takes, in rounds of 64 concurrent
// appends: SQLite and PostgreSQL, from one writer and from two; the chain verified after each.
import { join } from 'node:path';
import { distUrl } from '../lib/paths.mjs';

export async function audit({ settings, fixtures, shared }) {
  const { STORE_REGISTRY, storeWiring } = await import(distUrl('app/composition/store-kinds.js'));
  const { CrnFormat } = await import(distUrl('domain/crn.js'));
  // Every setting at its default, as `serve` would read an empty environment.
  const wiring = storeWiring(CrnFormat.default, () => {});
  const { byKind } = STORE_REGISTRY.readSettings({});
  const record = (i) => ({
    at: new Date(),
    requestId: `bench-${i}`,
    clientId: 'bench-client',
    certificateSerial: 'AB12',
    onBehalfOf: null,
    operation: 'getCase',
    crn: 'X123456',
    status: 200,
    problem: null,
    access: null,
    issued: null,
  });
  const durationMs = settings.durationS * 1000;
  const measure = async (url, writers) => {
    const logs = [];
    for (let w = 0; w < writers; w++)
      logs.push(
        await STORE_REGISTRY.openAuditLog(STORE_REGISTRY.refOf('audit', url, byKind), wiring, {
          create: true,
        }),
      );
    let appended = 0;
    const deadline = performance.now() + durationMs;
    await Promise.all(
      logs.map(async (log) => {
        while (performance.now() < deadline) {
          await Promise.all(Array.from({ length: 64 }, () => log.value.append(record(appended++))));
        }
      }),
    );
    const verdict = await logs[0].value.verify();
    for (const log of logs) await log.close();
    if (!verdict.ok) throw new Error(`the audit chain broke: ${JSON.stringify(verdict)}`);
    return Math.round(appended / settings.durationS);
  };
  const results = {
    sqlite1: await measure(`sqlite:${join(fixtures.dir, 'audit-bench-1.db')}`, 1),
    sqlite2: await measure(`sqlite:${join(fixtures.dir, 'audit-bench-2.db')}`, 2),
    postgres1: await measure(shared.pgStore('audit1'), 1),
    postgres2: await measure(shared.pgStore('audit2'), 2),
  };
  for (const [name, perSecond] of Object.entries(results)) {
    process.stdout.write(`${name.padEnd(10)} ${String(perSecond).padStart(7)} appends/s (chain verified)\n`);
  }
  return { scenario: 'audit', appendsPerSecond: results, ratio: null };
}
