import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The test database: the machine's PostgreSQL (trust auth), or TEST_POSTGRES_URL. */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

/** Runs SQL on the test database outside any store's pool. */
export async function adminQuery(
  sql: string,
  values: unknown[] = [],
  schema = 'public',
): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

export interface TestSchema {
  readonly name: string;
  /** A store URL in this schema. */
  readonly url: string;
  /** Runs SQL with this schema on the search path. */
  query(sql: string, values?: unknown[]): Promise<pg.QueryResult>;
  drop(): Promise<void>;
}

/** A schema of its own for one test file (or test), dropped with everything in it afterwards. */
export function testSchema(label: string): TestSchema {
  const name = `t_${label.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(4).toString('hex')}`;
  return {
    name,
    url: `${POSTGRES_URL}?schema=${name}`,
    query: (sql, values = []) => adminQuery(sql, values, name),
    drop: async () => {
      await adminQuery(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    },
  };
}
