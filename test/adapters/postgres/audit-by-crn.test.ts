/**
 * The PostgreSQL audit store's reading of one crn's records (decisions §22), beyond the
 * contract: its query can use the partial index by crn (`crn = $1` implies the index's
 * `crn IS NOT NULL`), and the records are then read by primary key, never by a walk of the table.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../../../src/adapters/postgres/store-kind.js';
import {
  crnKeysSql,
  crnRowsSql,
  POSTGRES_CRN,
  type TimeWindow,
} from '../../../src/adapters/shared/audit-by-crn.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { POSTGRES_URL, testSchema } from '../../support/postgres.js';
import { testContext } from '../../support/stores.js';

const schema = testSchema('audit_by_crn');
afterAll(() => schema.drop());

const WINDOWS: readonly TimeWindow[] = [
  {},
  { from: new Date(Date.UTC(2026, 0, 1)) },
  { to: new Date(Date.UTC(2027, 0, 1)) },
  { from: new Date(Date.UTC(2026, 0, 1)), to: new Date(Date.UTC(2027, 0, 1)) },
];

describe("PostgreSQL: one crn's records", () => {
  it('are found through the partial index audit_by_crn, and read by primary key', async () => {
    const opened = await postgresStores.audit?.open(schema.url, testContext, { create: true });
    if (!opened) throw new Error('postgres cannot hold the audit trail');
    try {
      await Promise.all(
        Array.from({ length: 2000 }, (_, k) =>
          opened.value.append(auditRecord(k + 1, { crn: k % 3 ? `C${k % 400}` : null })),
        ),
      );
    } finally {
      await opened.close();
    }
    const client = new pg.Client({
      connectionString: POSTGRES_URL,
      options: `-c search_path=${schema.name}`,
    });
    await client.connect();
    try {
      await client.query('ANALYZE audit');
      // No sequential scan to fall back on: the plan left is an index, the partial one only if it applies.
      await client.query('SET enable_seqscan = off');
      const planOf = async (text: string, values: unknown[]) =>
        (await client.query(`EXPLAIN ${text}`, values)).rows.map((row) => row['QUERY PLAN']).join('\n');
      for (const window of WINDOWS) {
        const keys = crnKeysSql('C17', window, POSTGRES_CRN);
        const plan = await planOf(keys.text, keys.values(0, 50_000));
        expect(plan).toMatch(/Index Scan on audit_by_crn/);
        expect(plan).not.toMatch(/audit_pkey|Seq Scan/);
      }
      const rows = await planOf(crnRowsSql(3, POSTGRES_CRN), [1, 2, 3]);
      expect(rows).toMatch(/Index Scan using audit_pkey on audit/);
      expect(rows).not.toMatch(/Seq Scan/);
    } finally {
      await client.end();
    }
  });
});
