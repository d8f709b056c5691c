import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStores } from '../../src/adapters/sqlite/store-kind.js';
import { openSqlite } from '../support/sqlite.js';
import { testContext } from '../support/stores.js';
import { DAMAGED_RULES, describeCaseRepositoryContract } from './case-repository.contract.js';

const kind = sqliteStores.cases;
if (kind?.openWriter === undefined) throw new Error('sqlite holds and writes cases');

describeCaseRepositoryContract(
  'sqlite',
  async (records) => {
    const dir = mkdtempSync(join(tmpdir(), 'case-read-contract-'));
    const url = `sqlite:${join(dir, 'cases.db')}`;
    const writer = await kind.openWriter?.(url, testContext);
    await writer?.value.write(records);
    await writer?.close();
    // Read back through the store kind's read-only opening, as `serve` does.
    const opened = await kind.open(url, testContext);
    return {
      repository: opened.value,
      ping: () => opened.ping(),
      close: () => opened.close(),
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
      damage: (crn) => {
        // A hand edit beside the service (the column's CHECK only asks for JSON).
        const db = openSqlite(join(dir, 'cases.db'));
        db.prepare('UPDATE cases SET limited_access = ? WHERE crn = ?').run(DAMAGED_RULES, crn);
        db.close();
      },
    };
  },
  {
    openMissing: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'case-read-contract-'));
      try {
        return await kind.open(`sqlite:${join(dir, 'never-made.db')}`, testContext);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
);
