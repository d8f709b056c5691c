import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import { archiveLockHolder } from '../../support/archive-holder.js';
import { execOn } from '../../support/sqlite.js';

/**
 * The archive lock of a SQLite audit store (src/adapters/sqlite/archive-lease.ts), beyond the
 * contract: a lease its holder left when it died lapses at once on this host, and after a
 * minute unrenewed from another; a run whose lease lapsed and was taken no longer holds it.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-archive-lease-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let path: string;
let n = 0;
beforeEach(() => {
  path = join(dir, `audit-${++n}.db`);
  SqliteAuditLog.open(path).close();
});

/** A lease row as another run would have left it. */
function leaseOf(fields: { host: string; pid: number; process?: string; renewedMsAgo: number }) {
  const renewed = new Date(Date.now() - fields.renewedMsAgo).toISOString();
  execOn(
    path,
    `INSERT INTO audit_archive_lease (id, token, who, host, pid, process, since, renewed) VALUES (1, 'theirs', 'their run', '${fields.host}', ${fields.pid}, '${fields.process ?? 'theirs'}', '${renewed}', '${renewed}')`,
  );
}

const take = async (who = 'this run') => SqliteAuditLog.open(path).lockArchive(who);

describe('the SQLite archive lease', () => {
  it('a lease its holder left when killed on this host is taken at once', async () => {
    const child = await archiveLockHolder(
      `(await import(DIST + 'adapters/sqlite/audit-log.js')).SqliteAuditLog.open(${JSON.stringify(path)})`,
      'the child',
    );
    expect(await take()).toMatchObject({ busy: { who: 'the child' } });
    child.kill('SIGKILL');
    await once(child, 'exit');
    const taken = await take();
    expect('held' in taken).toBe(true);
  });

  it("another host's lease holds until a minute passes unrenewed", async () => {
    leaseOf({ host: 'another-host', pid: process.pid, renewedMsAgo: 30_000 });
    expect(await take()).toMatchObject({ busy: { who: 'their run' } });
    execOn(path, 'DELETE FROM audit_archive_lease');
    leaseOf({ host: 'another-host', pid: process.pid, renewedMsAgo: 61_000 });
    expect('held' in (await take())).toBe(true);
  });

  it('a lease taken by an earlier process with this pid (a container restarted) is taken at once', async () => {
    leaseOf({ host: hostname(), pid: process.pid, process: 'an earlier one', renewedMsAgo: 0 });
    expect('held' in (await take())).toBe(true);
  });

  it('a run whose lease lapsed and was taken by another no longer holds it, and its release leaves the other’s', async () => {
    const first = await take('first');
    if (!('held' in first)) throw new Error('not taken');
    // Unrenewed for two minutes (its event loop held, say), on a host this one cannot see.
    execOn(
      path,
      `UPDATE audit_archive_lease SET renewed = '${new Date(Date.now() - 120_000).toISOString()}', host = 'elsewhere'`,
    );
    const second = await take('second');
    if (!('held' in second)) throw new Error('a lapsed lease was not taken');
    expect(await first.held.stillHeld()).toBe(false);
    await first.held.release();
    expect(await second.held.stillHeld()).toBe(true);
    expect(await take('third')).toMatchObject({ busy: { who: 'second' } });
  });
});
