import type { StoredAuditRecord } from '../../domain/audit/record.js';
import { EXIT, type Io, openAuditStore, parse, positionals, report, UsageError, using } from './common.js';

const STORE = { 'audit-store': { type: 'string' }, json: { type: 'boolean' } } as const;

const line = (r: StoredAuditRecord) =>
  `${r.seq}  ${r.at.toISOString()}  ${r.clientId}  ${r.operation}${r.crn ? ` ${r.crn}` : ''}  ${r.status}${r.problem ? ` ${r.problem}` : ''}${r.access ? ` (${r.access})` : ''}${r.onBehalfOf ? `  on behalf of ${r.onBehalfOf}` : ''}  ${r.requestId}`;

/** `audit verify`: walks the hash chain; exit 1 when it is broken. `audit query`: filtered records. */
export async function audit(sub: string | undefined, args: string[], io: Io): Promise<number> {
  if (sub === 'verify') {
    const { values, positionals: rest } = parse(args, STORE);
    positionals(rest, []);
    return using(openAuditStore(values['audit-store'], io), async ({ value: log }) => {
      const result = await log.verify();
      if (result.ok) {
        report(io, values.json, result, `audit chain intact: ${result.records} record(s)`);
        return EXIT.ok;
      }
      report(io, values.json, result, `audit chain BROKEN at record ${result.brokenAt}: ${result.reason}`);
      return EXIT.failure;
    });
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
    return using(openAuditStore(values['audit-store'], io), async ({ value: log }) => {
      const records = await log.query({
        ...(values.client ? { clientId: values.client } : {}),
        ...(values.crn ? { crn: values.crn } : {}),
        ...(since ? { since } : {}),
        ...(values.limit ? { limit: Number(values.limit) } : {}),
      });
      report(io, values.json, records, records.length === 0 ? ['no records'] : records.map(line));
      return EXIT.ok;
    });
  }
  throw new UsageError(
    sub === undefined ? 'audit needs a subcommand: verify or query' : `unknown audit subcommand: ${sub}`,
  );
}
