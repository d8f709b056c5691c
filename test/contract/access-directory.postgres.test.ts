import type { PostgresAccessDirectory } from '../../src/adapters/postgres/access-directory.js';
import { postgresStores } from '../../src/adapters/postgres/store-kind.js';
import { testSchema } from '../support/postgres.js';
import { testContext } from '../support/stores.js';
import { type AccessStore, describeAccessDirectoryContract } from './access-directory.contract.js';

describeAccessDirectoryContract('postgres', async () => {
  const schema = testSchema('access');
  const admin = await postgresStores.access?.openAdmin?.(schema.url, testContext);
  // The service reads through its own pool, with the cache and its change listener.
  const reader = await postgresStores.access?.open(schema.url, testContext);
  if (!admin || !reader) throw new Error('postgres cannot hold clients');
  // Another instance sees a change once its notification arrives (milliseconds; the
  // README states the bound). The contract's "the next read sees it" is checked after
  // that: every write through `admin` resolves once the reader has been notified.
  const directory = reader.value as PostgresAccessDirectory;
  const settled = new Proxy(admin.value, {
    get(target, name, receiver) {
      const member = Reflect.get(target, name, receiver);
      if (typeof member !== 'function') return member;
      return async (...args: unknown[]) => {
        const result = await member.apply(target, args);
        await directory.sync();
        return result;
      };
    },
  }) as AccessStore;
  return {
    admin: settled,
    reader: reader.value,
    close: async () => {
      await reader.close();
      await admin.close();
      await schema.drop();
    },
  };
});
