import type { AuditLog } from '../../ports/audit-log.js';
import type { NoSettings, Opened, StoreKind } from '../../ports/stores.js';
import { closeOnce } from '../shared/close-once.js';
import { fileUrls, requireExistingAudit } from '../shared/store-urls.js';
import { noSettings } from '../shared/variables.js';

const urls = fileUrls('jsonl:', './data/audit.jsonl');

/**
 * `jsonl:PATH`: the audit trail as an append-only file of hash-chained JSON lines, written
 * by one process (a lock file beside it says which). The cheapest audit store per request;
 * for several instances use `sqlite:` (one machine) or `postgres://`.
 */
export const jsonlStores: StoreKind<NoSettings> = {
  name: 'jsonl',
  form: 'jsonl:PATH',
  recognises: urls.recognises,
  problem: urls.problem,
  display: urls.display,
  settings: noSettings,
  audit: {
    open: async (url, context, { create }): Promise<Opened<AuditLog>> => {
      const { JsonlAuditLog } = await import('./audit-log.js');
      const path = urls.pathOf(url);
      if (!create) requireExistingAudit(path);
      const log = JsonlAuditLog.open(path, { mode: create ? 'write' : 'read', log: context.log });
      return {
        value: log,
        description: url,
        ping: () => log.ping(),
        close: closeOnce(async () => log.close()),
      };
    },
  },
};
