import type { PostgresAccessDirectory } from '../../src/adapters/postgres/access-directory.js';
import { postgresStores } from '../../src/adapters/postgres/store-kind.js';
import type { Opened } from '../../src/ports/stores.js';
import { POSTGRES_URL, testSchema } from '../support/postgres.js';
import { testContext } from '../support/stores.js';
import { type AccessStore, describeAccessDirectoryContract } from './access-directory.contract.js';
import { otherOperator } from './access-directory.other-operator.js';

describeAccessDirectoryContract('postgres', async () => {
  const schema = testSchema('access');
  const admin = await postgresStores.access?.openAdmin?.(schema.url, testContext);
  // The service reads through its own pool, with the cache and its change listener.
  const first = await postgresStores.access?.open(schema.url, testContext);
  if (!admin || !first) throw new Error('postgres cannot hold clients');
  let reader = first;
  // Another instance sees a change once its notification arrives (milliseconds; the
  // README states the bound). The contract's "the next read sees it" is checked after
  // that: every write through `admin` resolves once the reader has been notified.
  let directory = reader.value as PostgresAccessDirectory;
  let synced = Promise.resolve();
  const settled = new Proxy(admin.value, {
    get(target, name, receiver) {
      const member = Reflect.get(target, name, receiver);
      if (typeof member !== 'function') return member;
      return async (...args: unknown[]) => {
        const result = await member.apply(target, args);
        // One sync at a time: the listening connection runs one query at once.
        synced = synced.then(() => directory.sync());
        await synced;
        return result;
      };
    },
  }) as AccessStore;
  // Other operators' administrations of the same schema, each with a pool of its own.
  const others: Opened<AccessStore>[] = [];
  return {
    admin: settled,
    reader: reader.value,
    another: async () => {
      const other = await postgresStores.access?.openAdmin?.(schema.url, testContext);
      if (!other) throw new Error('postgres cannot hold clients');
      others.push(other);
      return other.value;
    },
    otherOperator: () => otherOperator({ engine: 'postgres', url: POSTGRES_URL, schema: schema.name }),
    reopen: async () => {
      await reader.close();
      const next = await postgresStores.access?.open(schema.url, testContext);
      if (!next) throw new Error('postgres cannot hold clients');
      reader = next;
      directory = reader.value as PostgresAccessDirectory;
      return reader.value;
    },
    close: async () => {
      await reader.close();
      for (const other of others) await other.close();
      await admin.close();
      await schema.drop();
    },
  };
});
