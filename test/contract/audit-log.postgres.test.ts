import { AUDIT_STORE } from '../../src/adapters/postgres/audit-log.js';
import { createPool, migrate } from '../../src/adapters/postgres/database.js';
import { postgresStores } from '../../src/adapters/postgres/store-kind.js';
import { targetOf } from '../../src/adapters/postgres/url.js';
import { checkpointValuesOf } from '../../src/adapters/shared/audit-chain.js';
import { testSchema } from '../support/postgres.js';
import { testContext } from '../support/stores.js';
import { describeAuditLogContract, tamperSql } from './audit-log.contract.js';

describeAuditLogContract('postgres', async () => {
  const schema = testSchema('audit');
  return {
    open: async () => {
      const opened = await postgresStores.audit?.open(schema.url, testContext, { create: true });
      if (!opened) throw new Error('postgres cannot hold the audit trail');
      return { log: opened.value, close: () => opened.close() };
    },
    tamper: async (change) => {
      await schema.query(tamperSql(change));
    },
    refuseWrites: async () => {
      await schema.query(
        `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`,
      );
      await schema.query(
        'CREATE TRIGGER refuse BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION refuse()',
      );
    },
    allowWrites: async () => {
      await schema.query('DROP TRIGGER refuse ON audit');
    },
    dispose: () => schema.drop(),
    previous: {
      // The schema as the release before left it: every migration but the last, and its record.
      build: async (checkpoint) => {
        const pool = createPool(targetOf(schema.url), { application: 'case-read test' });
        try {
          await migrate(pool, schema.name, {
            ...AUDIT_STORE,
            migrations: AUDIT_STORE.migrations.slice(0, -1),
          });
        } finally {
          await pool.end();
        }
        await schema.query(
          'INSERT INTO audit_checkpoints (seq, head, time, key_id, signature, note) VALUES ($1, $2, $3, $4, $5, $6)',
          checkpointValuesOf(checkpoint),
        );
      },
      migrate: async () => {
        const migrated = await postgresStores.audit?.migrate?.(schema.url, testContext);
        if (migrated === undefined) throw new Error('the postgres kind migrates no audit store');
        return migrated;
      },
    },
  };
});
