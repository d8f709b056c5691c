import type pg from 'pg';
import type { ArchiveLock, ArchiveLockHolder } from '../../ports/audit-log.js';
import { sideConnection } from './database.js';

/**
 * The trail's archive lock in a PostgreSQL audit store (decisions §18): a session advisory
 * lock keyed by the store's schema, held on a connection of its own for the run. The server
 * lets go of it when that connection ends, so a run killed at any instant, on any machine,
 * holds it no longer than its connection lasts. Who holds it is read from the server:
 * the holding connection's application name (this run's `who`), its address and when it began.
 */

/** The lock's first key: the archive locks of case-read audit stores ('crar'). */
const LOCK_CLASS = 0x63726172;
/** Its second: the store's schema, hashed by the server (kept non-negative, so pg_locks' oid reads the same). */
const LOCK_KEY = "(hashtext(current_schema() || '.audit-archive') & 2147483647)";
/** The application name a connection carries: at most 63 bytes. */
const APPLICATION = 'case-read audit archive';

const HELD_BY_ME_SQL = `SELECT count(*)::int AS n FROM pg_locks
  WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND granted
    AND classid = ${LOCK_CLASS} AND objid::bigint = ${LOCK_KEY} AND objsubid = 2`;

const HOLDER_SQL = `SELECT a.application_name, host(a.client_addr) AS addr, a.backend_start FROM pg_locks l
  JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ${LOCK_CLASS} AND l.objid::bigint = ${LOCK_KEY} AND l.objsubid = 2`;

interface HolderRow {
  readonly application_name: string | null;
  readonly addr: string | null;
  readonly backend_start: Date | null;
}

/**
 * Takes the lock for `who` on a new connection made as `pool`'s are now ({@link sideConnection}:
 * its schema, timeouts and TLS, the client certificate of the newest reload).
 */
export async function takeArchiveAdvisoryLock(
  pool: pg.Pool,
  who: string,
): Promise<{ readonly held: ArchiveLock } | { readonly busy: ArchiveLockHolder }> {
  const client = sideConnection(pool, `${APPLICATION}: ${who}`);
  // A connection lost is a lock lost: stillHeld says so, and nothing else listens.
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ taken: boolean }>(
      `SELECT pg_try_advisory_lock(${LOCK_CLASS}, ${LOCK_KEY}) AS taken`,
    );
    if (rows[0]?.taken !== true) {
      const holder = (await client.query<HolderRow>(HOLDER_SQL)).rows[0];
      await client.end();
      const name = holder?.application_name?.replace(`${APPLICATION}: `, '') ?? 'another connection';
      return {
        busy: {
          who: `${name}${holder?.addr ? ` (from ${holder.addr})` : ''}`,
          since: holder?.backend_start ?? new Date(),
        },
      };
    }
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  let released = false;
  return {
    held: {
      stillHeld: async () => {
        if (released) return false;
        try {
          return (await client.query<{ n: number }>(HELD_BY_ME_SQL)).rows[0]?.n === 1;
        } catch {
          return false;
        }
      },
      release: async () => {
        if (released) return;
        released = true;
        // Ending the connection ends the lock, whatever the unlock found.
        await client.end().catch(() => {});
      },
    },
  };
}
