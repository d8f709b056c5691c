import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCaseRepository, SqliteCaseWriter } from '../../src/adapters/sqlite/case-store.js';
import { describeCaseRepositoryContract } from './case-repository.contract.js';

describeCaseRepositoryContract('sqlite', async (records) => {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-contract-'));
  const path = join(dir, 'cases.db');
  const writer = SqliteCaseWriter.open(path);
  writer.write(records);
  writer.close();
  // Read back through a separate, read-only connection, as `serve` does.
  const repository = SqliteCaseRepository.openReadOnly(path);
  return {
    repository,
    close: () => {
      repository.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
