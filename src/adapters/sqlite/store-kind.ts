import type { NoSettings, Opened, SchemaMigration, StoreKind } from '../../ports/stores.js';
import { closeOnce } from '../shared/close-once.js';
import { fileUrls, requireExistingAudit } from '../shared/store-urls.js';
import { noSettings } from '../shared/variables.js';
import type { StoreDescription } from './database.js';

/** A store `serve` opened read-only, said so in its description. */
const readOnly = <T extends { ping(): void; close(): void }>(url: string, value: T): Opened<T> =>
  opened(value, `${url} (read-only)`);

const urls = fileUrls('sqlite:', './data/cases.db');
const { pathOf } = urls;

/** A SQLite store as opened: its synchronous ping and close, as the port's async ones. */
const opened = <T extends { ping(): void; close(): void }>(value: T, description: string): Opened<T> => ({
  value,
  description,
  ping: async () => value.ping(),
  close: closeOnce(async () => value.close()),
});

/** For `stores migrate`: the file's pending migrations applied, a missing store left missing. */
async function migrateStore(url: string, store: StoreDescription): Promise<SchemaMigration> {
  const { migrateFile } = await import('./database.js');
  return { ...migrateFile(pathOf(url), store), current: store.migrations.length };
}

/**
 * `sqlite:PATH`: one file per store, on this machine. The service opens case and access
 * stores read-only; the CLI creates and migrates them. The audit file may be shared by
 * several processes on one machine (each batch takes the write lock and links onto the
 * head it finds), never by several machines. The driver is loaded only when a SQLite
 * store is opened.
 */
export const sqliteStores: StoreKind<NoSettings> = {
  name: 'sqlite',
  form: 'sqlite:PATH',
  recognises: urls.recognises,
  problem: urls.problem,
  display: urls.display,
  settings: noSettings,
  cases: {
    open: async (url) =>
      readOnly(url, (await import('./case-store.js')).SqliteCaseRepository.openReadOnly(pathOf(url))),
    openWriter: async (url) => {
      const { SqliteCaseWriter } = await import('./case-store.js');
      const writer = SqliteCaseWriter.open(pathOf(url));
      return {
        value: { write: async (records) => writer.write(records), count: async () => writer.count() },
        description: url,
        ping: async () => {},
        close: closeOnce(async () => writer.close()),
      };
    },
    migrate: async (url) => migrateStore(url, (await import('./case-store.js')).CASE_STORE),
  },
  access: {
    open: async (url) =>
      readOnly(url, (await import('./access-directory.js')).SqliteAccessDirectory.openReadOnly(pathOf(url))),
    openAdmin: async (url) => {
      const { SqliteAccessAdministration } = await import('./access-administration.js');
      return opened(SqliteAccessAdministration.open(pathOf(url)), url);
    },
    migrate: async (url) => migrateStore(url, (await import('./access-schema.js')).ACCESS_STORE),
  },
  audit: {
    open: async (url, _context, { create }) => {
      const path = pathOf(url);
      if (!create) requireExistingAudit(path);
      const { SqliteAuditLog } = await import('./audit-log.js');
      const log = SqliteAuditLog.open(path);
      return {
        value: log,
        description: url,
        ping: () => log.ping(),
        close: closeOnce(async () => log.close()),
      };
    },
    migrate: async (url) => migrateStore(url, (await import('./audit-schema.js')).AUDIT_STORE),
  },
};
