// PostgreSQL and Redis for the scenarios that share stores: each run works in schemas and a
// key prefix of its own, and drops its schemas at the end.
//   BENCH_POSTGRES_URL (postgres://root@127.0.0.1:5432/test), BENCH_REDIS_URL (redis://127.0.0.1:6379)

export function sharedStores(env = process.env) {
  const postgresUrl = env.BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const redisUrl = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const runId = `bench_${process.pid}_${Date.now().toString(36)}`;
  const schemas = new Set();
  return {
    redisUrl,
    /** The prefix of this run's own schemas and Redis keys. */
    runId,
    /** A PostgreSQL store URL in a schema of this run's own (dropped by dropSchemas). */
    pgStore(name) {
      schemas.add(`${runId}_${name}`);
      return `${postgresUrl}?schema=${runId}_${name}`;
    },
    /** Drops every schema pgStore named; connects only if there is one. */
    async dropSchemas() {
      if (schemas.size === 0) return;
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}
