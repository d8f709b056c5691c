import { postgresStores } from '../../src/adapters/postgres/store-kind.js';
import { testSchema } from '../support/postgres.js';
import { testContext } from '../support/stores.js';
import { describeCaseRepositoryContract } from './case-repository.contract.js';

describeCaseRepositoryContract('postgres', async (records) => {
  const schema = testSchema('cases');
  const writer = await postgresStores.cases?.openWriter?.(schema.url, testContext);
  await writer?.value.write(records);
  await writer?.close();
  // Read back through the service's own read-only opening, as `serve` does.
  const opened = await postgresStores.cases?.open(schema.url, testContext);
  if (!opened) throw new Error('postgres cannot hold cases');
  return {
    repository: opened.value,
    close: async () => {
      await opened.close();
      await schema.drop();
    },
  };
});
