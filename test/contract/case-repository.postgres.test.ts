import { postgresStores } from '../../src/adapters/postgres/store-kind.js';
import { testSchema } from '../support/postgres.js';
import { testContext } from '../support/stores.js';
import { DAMAGED_RULES, describeCaseRepositoryContract } from './case-repository.contract.js';

const kind = postgresStores.cases;
if (kind?.openWriter === undefined) throw new Error('postgres holds and writes cases');

describeCaseRepositoryContract(
  'postgres',
  async (records) => {
    const schema = testSchema('cases');
    const writer = await kind.openWriter?.(schema.url, testContext);
    await writer?.value.write(records);
    await writer?.close();
    // Read back through the service's own read-only opening, as `serve` does.
    const opened = await kind.open(schema.url, testContext);
    return {
      repository: opened.value,
      ping: () => opened.ping(),
      close: () => opened.close(),
      cleanup: () => schema.drop(),
      damage: async (crn) => {
        // A hand edit beside the service (the json column asks only for JSON).
        await schema.query('UPDATE cases SET limited_access = $1 WHERE crn = $2', [DAMAGED_RULES, crn]);
      },
    };
  },
  {
    // A schema no one made: the service is told to run cases import (or stores migrate).
    openMissing: async () => kind.open(testSchema('never_made').url, testContext),
  },
);
