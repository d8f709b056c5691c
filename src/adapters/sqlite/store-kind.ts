import { existsSync } from 'node:fs';
import { type NoSettings, type Opened, StoreError, type StoreKind } from '../../ports/stores.js';
import { noSettings } from '../shared/variables.js';

const PREFIX = 'sqlite:';

/** A SQLite store as opened: its synchronous ping and close, as the port's async ones. */
const opened = <T extends { ping(): void; close(): void }>(value: T, description: string): Opened<T> => ({
  value,
  description,
  ping: async () => value.ping(),
  close: async () => value.close(),
});
const pathOf = (url: string) => url.slice(PREFIX.length);

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
  recognises: (url) => url.startsWith(PREFIX),
  problem: (url) =>
    pathOf(url).length === 0 ? 'sqlite: needs a file path, e.g. sqlite:./data/cases.db' : undefined,
  display: (url) => url,
  settings: noSettings,
  cases: {
    open: async (url) => {
      const { SqliteCaseRepository } = await import('./case-store.js');
      return opened(SqliteCaseRepository.openReadOnly(pathOf(url)), `${url} (read-only)`);
    },
    openWriter: async (url) => {
      const { SqliteCaseWriter } = await import('./case-store.js');
      const writer = SqliteCaseWriter.open(pathOf(url));
      return {
        value: { write: async (records) => writer.write(records), count: async () => writer.count() },
        description: url,
        ping: async () => {},
        close: async () => writer.close(),
      };
    },
  },
  access: {
    open: async (url) => {
      const { SqliteAccessDirectory } = await import('./access-directory.js');
      return opened(SqliteAccessDirectory.openReadOnly(pathOf(url)), `${url} (read-only)`);
    },
    openAdmin: async (url) => {
      const { SqliteAccessAdministration } = await import('./access-administration.js');
      return opened(SqliteAccessAdministration.open(pathOf(url)), url);
    },
  },
  audit: {
    open: async (url, _context, { create }) => {
      const path = pathOf(url);
      if (!create && !existsSync(path)) throw new StoreError(`audit store ${path} does not exist`);
      const { SqliteAuditLog } = await import('./audit-log.js');
      const log = SqliteAuditLog.open(path);
      return { value: log, description: url, ping: () => log.ping(), close: async () => log.close() };
    },
  },
};
