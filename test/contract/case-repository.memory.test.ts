import { InMemoryCaseRepository } from '../../src/adapters/memory/case-repository.js';
import { describeCaseRepositoryContract } from './case-repository.contract.js';

describeCaseRepositoryContract('memory', async (records) => ({
  repository: new InMemoryCaseRepository(records),
  close: () => {},
}));
