import { InMemoryAccessDirectory } from '../../src/adapters/memory/access-directory.js';
import { describeAccessDirectoryContract } from './access-directory.contract.js';

describeAccessDirectoryContract('memory', () => {
  const store = new InMemoryAccessDirectory();
  return { admin: store, reader: store, close: () => {} };
});
