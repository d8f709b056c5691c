import { existsSync } from 'node:fs';
import { SqliteAuditLog } from '../../adapters/sqlite/audit-log.js';
import type { StoredAuditRecord } from '../../domain/audit/record.js';
import { parseAuditStore } from '../config.js';
import {
  CommandError,
  EXIT,
  type Io,
  parse,
  positionals,
  report,
  storeOption,
  UsageError,
} from './common.js';

const STORE = { 'audit-store': { type: 'string' }, json: { type: 'boolean' } } as const;

function open(option: string | undefined, env: Io['env']): SqliteAuditLog {
  const parsed = storeOption('--audit-store', 'AUDIT_STORE', option, env, parseAuditStore);
  if (!existsSync(parsed.path)) throw new CommandError(`audit store ${parsed.path} does not exist`);
  return SqliteAuditLog.open(parsed.path);
}

const line = (r: StoredAuditRecord) =>
  `${r.seq}  ${r.at.toISOString()}  ${r.clientId}  ${r.operation}${r.crn ? ` ${r.crn}` : ''}  ${r.status}${r.onBehalfOf ? `  on behalf of ${r.onBehalfOf}` : ''}  ${r.requestId}`;

/** `audit verify`: walks the hash chain; exit 1 when it is broken. `audit query`: filtered records. */
export async function audit(sub: string | undefined, args: string[], io: Io): Promise<number> {
  if (sub === 'verify') {
    const { values, positionals: rest } = parse(args, STORE);
    positionals(rest, []);
    const log = open(values['audit-store'], io.env);
    try {
      const result = log.verify();
      if (result.ok) {
        report(io, values.json, result, `audit chain intact: ${result.records} record(s)`);
        return EXIT.ok;
      }
      report(io, values.json, result, `audit chain BROKEN at record ${result.brokenAt}: ${result.reason}`);
      return EXIT.failure;
    } finally {
      log.close();
    }
  }
  if (sub === 'query') {
    const { values, positionals: rest } = parse(args, {
      ...STORE,
      client: { type: 'string' },
      crn: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
    });
    positionals(rest, []);
    const since = values.since === undefined ? undefined : new Date(values.since);
    if (since !== undefined && Number.isNaN(since.getTime()))
      throw new UsageError('--since must be an ISO 8601 date-time, e.g. 2026-11-22T09:00:00Z');
    if (values.limit !== undefined && !/^\d{1,7}$/.test(values.limit))
      throw new UsageError('--limit must be a whole number');
    const log = open(values['audit-store'], io.env);
    try {
      const records = log.query({
        ...(values.client ? { clientId: values.client } : {}),
        ...(values.crn ? { crn: values.crn } : {}),
        ...(since ? { since } : {}),
        ...(values.limit ? { limit: Number(values.limit) } : {}),
      });
      report(io, values.json, records, records.length === 0 ? ['no records'] : records.map(line));
      return EXIT.ok;
    } finally {
      log.close();
    }
  }
  throw new UsageError(
    sub === undefined ? 'audit needs a subcommand: verify or query' : `unknown audit subcommand: ${sub}`,
  );
}
