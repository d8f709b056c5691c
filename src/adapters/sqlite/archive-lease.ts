import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ArchiveLock, ArchiveLockHolder } from '../../ports/audit-log.js';
import { transaction } from './database.js';
import type { SqlDatabase } from './driver.js';

/**
 * The trail's archive lock in a SQLite audit store (decisions §18): a lease, one row at most,
 * taken inside a write transaction (so two runs never both take it), renewed while the run
 * works, and given up at its end. A run that dies without giving it up leaves it to lapse: at
 * once when its process on this host is gone (its pid not running, or running another process:
 * this one, say, in a container restarted), else when it was not renewed for {@link LEASE_MS}.
 */

/** Audit store version 7: the lease. */
export const archiveLeaseSql = `
  CREATE TABLE audit_archive_lease (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    token    TEXT NOT NULL,
    who      TEXT NOT NULL,
    host     TEXT NOT NULL,
    pid      INTEGER NOT NULL,
    process  TEXT NOT NULL,
    since    TEXT NOT NULL,
    renewed  TEXT NOT NULL
  );
`;

/** How long a lease not renewed lasts: a run renews it at least every quarter of this while it works. */
export const LEASE_MS = 60_000;

/** This process, told apart from an earlier one that had its pid (a container restarted is pid 1 again). */
const PROCESS = randomUUID();

interface LeaseRow {
  readonly token: string;
  readonly who: string;
  readonly host: string;
  readonly pid: number;
  readonly process: string;
  readonly since: string;
  readonly renewed: string;
}

/** Whether the process that took a lease on this host is gone: its pid is not running, or is this process's and it was another. */
function gone(row: LeaseRow): boolean {
  if (row.pid === process.pid) return row.process !== PROCESS;
  try {
    process.kill(row.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Whether a lease no longer holds: not renewed in time, or its process on this host is gone. */
const lapsed = (row: LeaseRow, now: number): boolean =>
  now - Date.parse(row.renewed) > LEASE_MS || (row.host === hostname() && gone(row));

/**
 * Takes the lease for `who`. `write` runs a synchronous write once the database's write lock
 * can be had (the store's own way of waiting for another writer).
 */
export async function takeArchiveLease(
  db: SqlDatabase,
  who: string,
  write: <T>(work: () => T) => Promise<T>,
): Promise<{ readonly held: ArchiveLock } | { readonly busy: ArchiveLockHolder }> {
  const token = randomUUID();
  const read = db.prepare<[], LeaseRow>(
    'SELECT token, who, host, pid, process, since, renewed FROM audit_archive_lease WHERE id = 1',
  );
  const taken = await write(() =>
    transaction(
      db,
      () => {
        const now = Date.now();
        const row = read.get();
        if (row !== undefined && !lapsed(row, now)) return row;
        const at = new Date(now).toISOString();
        db.prepare(
          'INSERT OR REPLACE INTO audit_archive_lease (id, token, who, host, pid, process, since, renewed) VALUES (1, ?, ?, ?, ?, ?, ?, ?)',
        ).run(token, who, hostname(), process.pid, PROCESS, at, at);
        return undefined;
      },
      'immediate',
    ),
  );
  if (taken !== undefined) return { busy: { who: taken.who, since: new Date(taken.since) } };
  const renew = db.prepare<[string, string]>(
    'UPDATE audit_archive_lease SET renewed = ? WHERE id = 1 AND token = ?',
  );
  const remove = db.prepare<[string]>('DELETE FROM audit_archive_lease WHERE id = 1 AND token = ?');
  let released = false;
  return {
    held: {
      stillHeld: async () =>
        !released && (await write(() => renew.run(new Date().toISOString(), token).changes)) === 1,
      release: async () => {
        if (released) return;
        released = true;
        await write(() => remove.run(token));
      },
    },
  };
}
