import { postgresStores } from '../../src/adapters/postgres/store-kind.js';
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
  };
});
