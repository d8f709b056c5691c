import type pg from 'pg';
import type {
  CertificateInUse,
  NoSettings,
  Opened,
  SchemaMigration,
  StoreKind,
  StoreWiring,
} from '../../ports/stores.js';
import { closeOnce } from '../shared/close-once.js';
import { noSettings } from '../shared/variables.js';
import type { PostgresStoreDescription } from './database.js';
import { postgresTlsFiles, readPostgresTls, reloadPostgresTls } from './tls.js';
import { displayPostgresUrl, type PostgresTarget, postgresHop, postgresUrlProblem, targetOf } from './url.js';

/**
 * `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?schema=NAME&sslmode=…]`: case, access and audit stores
 * shared by every instance. `serve` needs the case and access stores to exist at the
 * current version (the CLI creates and migrates them) and creates the audit store itself.
 * The driver is loaded only when a PostgreSQL store is opened.
 */

interface Connected {
  readonly pool: pg.Pool;
  readonly target: PostgresTarget;
  readonly description: string;
  /** The store, as messages name it (`audit store`). */
  readonly store: string;
  /** The client certificate its connections present, if any. */
  readonly inUse: CertificateInUse | undefined;
}

/** A pooled connection lost while idle: a warning naming the store and the driver's code, never the text. */
const connectionLost =
  (context: StoreWiring, store: PostgresStoreDescription) =>
  (error: Error): void =>
    context.log(
      'warn',
      { store: store.what, err: (error as { code?: string }).code ?? 'connection' },
      'idle database connection lost',
    );

async function connect(
  url: string,
  context: StoreWiring,
  store: PostgresStoreDescription,
  how: { create: boolean; max: number },
): Promise<Connected> {
  const { createPool, migrate, requireCurrent } = await import('./database.js');
  const target = targetOf(url);
  const tls = target.tls.assurance === 'none' ? 'no TLS' : `TLS ${target.tls.assurance}`;
  const description = `${displayPostgresUrl(url)} (${store.what}, schema ${target.schema}, ${tls})`;
  // Read once: the pool's TLS options, and the client certificate they present.
  const files = readPostgresTls(store.what, target.tls);
  const pool = createPool(target, {
    ssl: files.ssl,
    max: how.max,
    // A statement no request will wait for is cancelled by the server, not left running.
    ...(context.requestDeadlineMs !== undefined ? { statementTimeoutMs: context.requestDeadlineMs } : {}),
    // Named for the operator's pg_stat_activity: which store, which schema.
    application: `case-read ${store.what} ${target.schema}`,
    store: store.what,
    onError: connectionLost(context, store),
  });
  try {
    if (how.create) await migrate(pool, target.schema, store);
    else await requireCurrent(pool, target.schema, store);
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  return { pool, target, description, store: store.what, inUse: files.inUse };
}

/** For `stores migrate`: the store's pending migrations applied, an absent store left absent. */
async function migrateStore(
  url: string,
  context: StoreWiring,
  store: PostgresStoreDescription,
): Promise<SchemaMigration> {
  const { createPool, migrate } = await import('./database.js');
  const target = targetOf(url);
  const pool = createPool(target, {
    max: 1,
    application: `case-read stores migrate ${target.schema}`,
    store: store.what,
    onError: connectionLost(context, store),
  });
  try {
    const { before, after } = await migrate(pool, target.schema, store, { create: false });
    return { before, after, current: store.migrations.length };
  } finally {
    await pool.end().catch(() => {});
  }
}

/**
 * The store as the service holds it. `renewed`, when given, is called after each TLS reload
 * has handed the pool the new files, for the store's side connections that stay open (the
 * access store's listener); the others are made from the pool's options when they are needed.
 */
function opened<T>(
  value: T,
  { pool, description, target, store, inUse: initial }: Connected,
  close?: () => Promise<void>,
  renewed?: () => void,
): Opened<T> {
  const files = postgresTlsFiles(target.tls);
  // The client certificate in use: replaced by each reload.
  let inUse = initial;
  return {
    value,
    description,
    ping: async () => {
      await pool.query('SELECT 1');
    },
    close: closeOnce(async () => {
      await close?.();
      await pool.end();
    }),
    ...(files.length > 0
      ? {
          tls: {
            name: `postgres-${store.replaceAll(' ', '-')}-client`,
            files,
            current: () => inUse,
            reload: async () => {
              const next = await reloadPostgresTls(store, target.tls);
              // The pool hands its options to each connection it makes: the next ones use these.
              pool.options.ssl = next.ssl;
              inUse = next.inUse;
              renewed?.();
              return inUse;
            },
          },
        }
      : {}),
  };
}

export const postgresStores: StoreKind<NoSettings> = {
  name: 'postgres',
  form: 'postgres://USER@HOST:PORT/DB[?schema=NAME]',
  recognises: (url) => /^postgres(ql)?:\/\//.test(url),
  problem: postgresUrlProblem,
  display: displayPostgresUrl,
  settings: noSettings,
  hop: postgresHop,
  cases: {
    open: async (url, context) => {
      const { CASE_STORE, PostgresCaseRepository } = await import('./case-store.js');
      const db = await connect(url, context, CASE_STORE, { create: false, max: 10 });
      return opened(new PostgresCaseRepository(db.pool), db);
    },
    openWriter: async (url, context) => {
      const { CASE_STORE, PostgresCaseWriter } = await import('./case-store.js');
      const db = await connect(url, context, CASE_STORE, { create: true, max: 2 });
      return opened(new PostgresCaseWriter(db.pool), db);
    },
    migrate: async (url, context) => migrateStore(url, context, (await import('./case-store.js')).CASE_STORE),
  },
  access: {
    open: async (url, context) => {
      const { ACCESS_STORE } = await import('./access-schema.js');
      const { PostgresAccessDirectory } = await import('./access-directory.js');
      const db = await connect(url, context, ACCESS_STORE, { create: false, max: 4 });
      const directory = new PostgresAccessDirectory(db.pool, db.target, {
        log: context.log,
        ...(context.onAccessListenerFailure ? { onFailure: context.onAccessListenerFailure } : {}),
      });
      await directory.listen();
      return opened(
        directory,
        db,
        () => directory.close(),
        () => void directory.renew(),
      );
    },
    openAdmin: async (url, context) => {
      const { ACCESS_STORE } = await import('./access-schema.js');
      const { PostgresAccessAdministration } = await import('./access-administration.js');
      const db = await connect(url, context, ACCESS_STORE, { create: true, max: 2 });
      return opened(new PostgresAccessAdministration(db.pool, db.target, { log: context.log }), db);
    },
    migrate: async (url, context) =>
      migrateStore(url, context, (await import('./access-schema.js')).ACCESS_STORE),
  },
  audit: {
    open: async (url, context, { create }) => {
      const { AUDIT_STORE, PostgresAuditLog } = await import('./audit-log.js');
      const db = await connect(url, context, AUDIT_STORE, { create, max: 4 });
      const log = new PostgresAuditLog(db.pool);
      return { ...opened(log, db, () => log.close()), ping: () => log.ping() };
    },
    migrate: async (url, context) => migrateStore(url, context, (await import('./audit-log.js')).AUDIT_STORE),
  },
};
