import { InMemoryCaseRepository } from '../../src/adapters/memory/case-repository.js';
import { describeCaseRepositoryContract } from './case-repository.contract.js';

describeCaseRepositoryContract(
  'memory',
  async (records) => ({
    repository: new InMemoryCaseRepository(records),
    ping: async () => {},
    close: () => {},
    damage: 'it holds only what the case file format accepted when it opened',
  }),
  { openMissing: 'its cases ship with the service (fixtures/cases.json)' },
);
