import { existsSync } from 'node:fs';
import type { AuditLog } from '../../ports/audit-log.js';
import { type NoSettings, type Opened, StoreError, type StoreKind } from '../../ports/stores.js';
import { noSettings } from '../shared/variables.js';

const PREFIX = 'jsonl:';
const pathOf = (url: string) => url.slice(PREFIX.length);

/**
 * `jsonl:PATH`: the audit trail as an append-only file of hash-chained JSON lines, written
 * by one process (a lock file beside it says which). The cheapest audit store per request;
 * for several instances use `sqlite:` (one machine) or `postgres://`.
 */
export const jsonlStores: StoreKind<NoSettings> = {
  name: 'jsonl',
  form: 'jsonl:PATH',
  recognises: (url) => url.startsWith(PREFIX),
  problem: (url) =>
    pathOf(url).length === 0 ? 'jsonl: needs a file path, e.g. jsonl:./data/audit.jsonl' : undefined,
  display: (url) => url,
  settings: noSettings,
  audit: {
    open: async (url, context, { create }): Promise<Opened<AuditLog>> => {
      const { JsonlAuditLog } = await import('./audit-log.js');
      const path = pathOf(url);
      if (!create && !existsSync(path)) throw new StoreError(`audit store ${path} does not exist`);
      const log = JsonlAuditLog.open(path, { mode: create ? 'write' : 'read', log: context.log });
      return { value: log, description: url, ping: () => log.ping(), close: async () => log.close() };
    },
  },
};
