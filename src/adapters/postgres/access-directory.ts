import type pg from 'pg';
import type {
  AccessDirectory,
  CertificateSeen,
  HeldAdmission,
  RenewalClaim,
} from '../../ports/access-directory.js';
import type { AccessListenerFailure, StoreLog } from '../../ports/stores.js';
import { AccessCache } from '../shared/access-cache.js';
import {
  type AccessReadName,
  accessReadsSql,
  accessWrites,
  CachedAccessReads,
  type CachedRead,
} from '../shared/access-requests.js';
import { ACCESS_CHANNEL, type PostgresClientRow, type PostgresKeyRow, ROWS, WHAT } from './access-schema.js';
import { describeFailure, onRequestPath, sideConnection } from './database.js';
import type { PostgresTarget } from './url.js';

const READS = accessReadsSql((n) => `$${n}`);
const WRITES = accessWrites((n) => `$${n}`, ROWS, '::timestamptz');

/** How often the listening connection is asked to answer while it is up. */
const HEARTBEAT_MS = 1000;
/**
 * How long after a heartbeat was sent its answer vouches for the cache: the bound on how stale
 * a read can be when the listening connection goes silent without ending (a path that drops
 * packets, a server that stops answering). An unanswered heartbeat ends the connection then.
 */
export const LISTENER_TRUSTED_FOR_MS = 3000;
/** The first wait before connecting again, doubled on each failure up to the last. */
const RETRY_FIRST_MS = 1000;
const RETRY_MOST_MS = 10_000;

/** Where the directory's listener reports: log lines, and a count of its failures (a metric). */
export interface AccessListenerReports {
  readonly log?: StoreLog;
  readonly onFailure?: (failure: AccessListenerFailure) => void;
}

/**
 * The access directory in PostgreSQL, shared by every instance.
 *
 * Reads are cached per instance, and a change made anywhere reaches every instance through
 * LISTEN/NOTIFY: a statement trigger on each table notifies `case_read_access` when it
 * commits, and each instance's listening connection drops its cache on the notification
 * (in practice within milliseconds). That connection is made as the pool's are, TLS and
 * client certificate included ({@link sideConnection}), and made again with the new files
 * after a TLS reload ({@link renew}). It is asked to answer every second; the cache is used
 * only while it is connected and its last answer was to a heartbeat sent less than
 * {@link LISTENER_TRUSTED_FOR_MS} ago (the server sends every notification before the answer
 * to a later query), so a change is never hidden by the cache for longer than that, even on
 * a connection that goes silent without ending. While it is down every read goes to the
 * database; it is made again after 1 s, then 2, 4 … up to 10 s, each failure logged with its
 * reason and counted.
 */
export class PostgresAccessDirectory
  extends CachedAccessReads<PostgresClientRow, PostgresKeyRow>
  implements AccessDirectory
{
  private listener: pg.Client | undefined;
  /** When the newest heartbeat answered was sent (ms, monotonic): every change committed before it has been heard. */
  private heardAt = Number.NEGATIVE_INFINITY;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The listener a heartbeat is waiting on, if any (one at a time). */
  private beating: pg.Client | undefined;
  /** Whether a failure was reported since the listener was last up (for the line saying it is back). */
  private down = false;
  /** Bumped by each TLS reload: a connection begun before one is made again after it. */
  private settings = 0;
  /** Bumped on every invalidation, so a read that began before it does not fill the cache. */
  private generation = 0;
  private readonly log: StoreLog;

  constructor(
    protected readonly pool: pg.Pool,
    private readonly target: PostgresTarget,
    private readonly reports: AccessListenerReports = {},
  ) {
    super(ROWS);
    this.log = reports.log ?? (() => {});
  }

  /** Starts listening for changes; reads are cached only while this connection is up and answering. */
  async listen(): Promise<void> {
    if (this.closed || this.listener !== undefined) return;
    const settings = this.settings;
    const client = await this.connectListener('connect');
    if (client === undefined) {
      this.scheduleListen();
      return;
    }
    this.adopt(client);
    // Files reloaded while it was connecting: it presented the old ones.
    if (settings !== this.settings) await this.renew();
  }

  /**
   * After the store's TLS files are reloaded (the pool's options hold the new ones): a listening
   * connection made with them replaces the one in use, which listens until then. When it cannot
   * be made the one in use stays (its handshake is done) and the failure is logged and counted;
   * a listener that is down connects with the new files next time anyway.
   */
  async renew(): Promise<void> {
    this.settings++;
    if (this.closed || this.listener === undefined) return;
    const client = await this.connectListener('renew');
    if (client !== undefined) this.adopt(client);
  }

  /**
   * A new listening connection, LISTENing; undefined (logged and counted) when it cannot be
   * made: to `connect` a listener that is down, or to `renew` the one in use.
   */
  private async connectListener(why: 'connect' | 'renew'): Promise<pg.Client | undefined> {
    const client = sideConnection(this.pool, `case-read access listener ${this.target.schema}`, {
      // A peer gone without a word is found by the heartbeat; keep-alive closes the socket.
      keepAlive: true,
    });
    client.on('error', (error) => this.lost(client, 'lost', error));
    client.on('end', () => this.lost(client, 'lost'));
    client.on('notification', (message) => {
      if (message.payload === this.target.schema) this.invalidate();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${ACCESS_CHANNEL}`);
      return client;
    } catch (error) {
      client.end().catch(() => {});
      if (why === 'renew') this.renewFailed(error);
      else this.failed('connect-failed', error);
      return undefined;
    }
  }

  /** Makes `client` the listener, replacing any other. */
  private adopt(client: pg.Client): void {
    if (this.closed) {
      client.end().catch(() => {});
      return;
    }
    const previous = this.listener;
    this.listener = client;
    // Anything cached before now may predate a change neither connection heard about.
    this.invalidate();
    this.heardAt = performance.now();
    this.retryMs = RETRY_FIRST_MS;
    previous?.end().catch(() => {});
    this.heartbeat ??= setInterval(() => this.beat(), HEARTBEAT_MS).unref();
    if (this.down) {
      this.down = false;
      this.log(
        'info',
        { store: WHAT, schema: this.target.schema },
        'access store change listener back; caching again',
      );
    }
  }

  /** Asks the listener to answer; one that has not answered within the bound is ended and made again. */
  private beat(): void {
    const client = this.listener;
    if (client === undefined || this.beating === client) return;
    this.beating = client;
    const sentAt = performance.now();
    const silent = setTimeout(
      () => this.lost(client, 'silent', new Error('no answer to a heartbeat')),
      LISTENER_TRUSTED_FOR_MS,
    ).unref();
    client
      .query('SELECT 1')
      .then(
        () => {
          if (this.listener === client) this.heardAt = Math.max(this.heardAt, sentAt);
        },
        () => {},
      )
      .finally(() => {
        clearTimeout(silent);
        if (this.beating === client) this.beating = undefined;
      });
  }

  /** The listener ended, failed or went silent: nothing cached is used until one is back. */
  private lost(client: pg.Client, failure: AccessListenerFailure, error?: unknown): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    this.invalidate();
    client.end().catch(() => {});
    if (this.closed) return;
    this.failed(failure, error);
    this.scheduleListen();
  }

  /** A failure logged (the store, its schema and the reason, never the password) and counted. */
  private failed(failure: AccessListenerFailure, error?: unknown): void {
    if (this.closed) return;
    this.down = true;
    this.reports.onFailure?.(failure);
    this.log(
      'warn',
      {
        store: WHAT,
        schema: this.target.schema,
        failure,
        ...(error === undefined ? {} : { err: describeFailure(error) }),
      },
      failure === 'connect-failed'
        ? 'access store change listener could not connect; reading uncached'
        : 'access store change listener lost; reading uncached',
    );
  }

  /** A listener with the reloaded files could not be made: counted, and the one in use kept. */
  private renewFailed(error: unknown): void {
    if (this.closed) return;
    this.reports.onFailure?.('connect-failed');
    this.log(
      'warn',
      { store: WHAT, schema: this.target.schema, failure: 'connect-failed', err: describeFailure(error) },
      'access store change listener could not connect with the reloaded TLS files; the connection in use stays',
    );
  }

  /**
   * Resolves once every change committed before the call has reached this instance's cache:
   * the server sends a notification before the answer to any later query on the listening
   * connection. (For tests and tools; requests never wait on it.)
   */
  async sync(): Promise<void> {
    await this.listener?.query('SELECT 1');
  }

  private scheduleListen(): void {
    if (this.closed || this.retry) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(wait * 2, RETRY_MOST_MS);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.listen();
    }, wait);
    this.retry.unref();
  }

  /** Whether the cache may be used: the listener is up and has answered a heartbeat sent within the bound. */
  private trusted(): boolean {
    return this.listener !== undefined && performance.now() - this.heardAt < LISTENER_TRUSTED_FOR_MS;
  }

  private invalidate(): void {
    this.generation++;
    this.cache.clear();
  }

  /** A read through the cache, when trusted; what is read is kept only if nothing was heard to change meanwhile. */
  protected async readThroughCache<R, V>(read: CachedRead<R, V>): Promise<V | undefined> {
    if (this.trusted()) {
      const hit = read.cache.get(read.key);
      if (hit !== undefined) return hit;
    }
    const generation = this.generation;
    const value = await onRequestPath(WHAT, async () =>
      read.answer(await this.rowsOf<R>(read.name, read.values)),
    );
    if (value !== undefined && generation === this.generation && this.trusted()) {
      AccessCache.remember(read.cache, read.key, value);
    }
    return value;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.heartbeat) clearInterval(this.heartbeat);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
  }

  /** The rows of one read of the request path, a statement prepared by name (`access-NAME`). */
  private async rowsOf<R>(name: AccessReadName, values: readonly unknown[]): Promise<R[]> {
    return (
      await this.pool.query<R & pg.QueryResultRow>({
        name: `access-${name}`,
        text: READS[name],
        values: [...values],
      })
    ).rows;
  }

  /** Held only while the change listener is up and answering: without it nothing cached is trusted. */
  heldAdmission(keyId: string, clientId: string, serialNumber: string): HeldAdmission | undefined {
    return this.trusted() ? this.cache.admission(keyId, clientId, serialNumber) : undefined;
  }

  async noteCertificate(seen: CertificateSeen): Promise<void> {
    await this.pool.query(WRITES.noteCertificate(seen));
  }

  /**
   * One `INSERT … ON CONFLICT DO NOTHING`: of concurrent claims, on any instance, the one
   * whose row commits first is true (the others wait for it, then insert nothing). A failure
   * is a `StoreUnavailableError` (503).
   */
  async claimRenewal(claim: RenewalClaim): Promise<boolean> {
    const { rowCount } = await onRequestPath(WHAT, () => this.pool.query(WRITES.claimRenewal(claim)));
    return (rowCount ?? 0) > 0;
  }

  async completeRenewal(serialNumber: string, issuedSerialNumber: string | null): Promise<void> {
    await onRequestPath(WHAT, () =>
      this.pool.query(WRITES.completeRenewal(serialNumber, issuedSerialNumber)),
    );
  }
}
