import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../../../src/adapters/postgres/store-kind.js';
import type { AuditLog } from '../../../src/ports/audit-log.js';
import { archiveLockHolder } from '../../support/archive-holder.js';
import { testSchema } from '../../support/postgres.js';
import { testContext } from '../../support/stores.js';

/**
 * The archive lock of a PostgreSQL audit store (src/adapters/postgres/archive-lock.ts), beyond
 * the contract: held by a process that is killed, it is free once the server sees its
 * connection close; it is the schema's, so another trail's run is not held up; and a run whose
 * connection was ended no longer holds it.
 */

const schemas = [testSchema('archive_lock_a'), testSchema('archive_lock_b')];
const closers: (() => Promise<void>)[] = [];
const open = async (url: string): Promise<AuditLog> => {
  const opened = await postgresStores.audit?.open(url, testContext, { create: true });
  if (!opened) throw new Error('postgres cannot hold the audit trail');
  closers.push(() => opened.close());
  return opened.value;
};
let one: AuditLog;
let other: AuditLog;
beforeAll(async () => {
  one = await open((schemas[0] as { url: string }).url);
  other = await open((schemas[1] as { url: string }).url);
});
afterAll(async () => {
  for (const close of closers) await close();
  for (const schema of schemas) await schema.drop();
});

describe('the PostgreSQL archive lock', () => {
  it('held by a process that is killed, it is free again; meanwhile another schema’s trail is not held up', async () => {
    const url = (schemas[0] as { url: string }).url;
    const child = await archiveLockHolder(
      `(await (await import(DIST + 'adapters/postgres/store-kind.js')).postgresStores.audit.open(${JSON.stringify(url)}, { log: () => {}, settings: {} }, { create: false })).value`,
      'the child',
    );
    expect(await one.lockArchive('this run')).toMatchObject({
      busy: { who: expect.stringContaining('the child') },
    });
    const elsewhere = await other.lockArchive('another trail');
    if (!('held' in elsewhere)) throw new Error('the lock of one schema held up another');
    await elsewhere.held.release();
    child.kill('SIGKILL');
    await once(child, 'exit');
    // The server ends the child's session once it reads the closed socket; then the lock is free.
    const schema = schemas[0] as { query: (sql: string) => Promise<{ rows: { n: number }[] }> };
    const sessions = async () =>
      (
        await schema.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'case-read audit archive: the child'",
        )
      ).rows[0]?.n;
    while ((await sessions()) !== 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const taken = await one.lockArchive('this run');
    if (!('held' in taken)) throw new Error('the killed holder’s lock was not freed with its session');
    await taken.held.release();
  });

  it('a run whose connection was ended no longer holds it', async () => {
    const taken = await one.lockArchive('this run');
    if (!('held' in taken)) throw new Error('not taken');
    const schema = schemas[0] as { query: (sql: string) => Promise<unknown> };
    await schema.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'case-read audit archive: this run'",
    );
    expect(await taken.held.stillHeld()).toBe(false);
    await taken.held.release();
    const again = await other.lockArchive('next');
    if ('held' in again) await again.held.release();
  });
});
