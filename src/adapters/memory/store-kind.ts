import { loadCaseFile } from '../../formats/case-file.js';
import type { NoSettings, Opened, StoreKind } from '../../ports/stores.js';
import { noSettings } from '../shared/variables.js';
import { InMemoryAccessDirectory } from './access-directory.js';
import { InMemoryCaseRepository } from './case-repository.js';
import { InMemoryRateLimiter } from './rate-limiter.js';

/** The synthetic fixtures that ship with the service: the memory store's cases. */
export const FIXTURES_PATH = new URL('../../../fixtures/cases.json', import.meta.url);

const held = <T>(value: T, description: string): Opened<T> => ({
  value,
  description,
  ping: async () => {},
  close: async () => {},
});

/**
 * `memory`: the fixture cases, an empty access directory (every request is refused), and
 * rate-limit counts held by this instance alone. Nothing survives a restart.
 */
export const memoryStores: StoreKind<NoSettings> = {
  name: 'memory',
  form: 'memory',
  recognises: (url) => url === 'memory',
  problem: () => undefined,
  display: () => 'memory',
  settings: noSettings,
  cases: {
    open: async (_url, { crnFormat }) => {
      const repository = new InMemoryCaseRepository(loadCaseFile(FIXTURES_PATH.pathname, { crnFormat }));
      return held(repository, `memory (${repository.size} fixture cases)`);
    },
  },
  access: {
    open: async () => held(new InMemoryAccessDirectory(), 'memory (empty: every request is refused)'),
  },
  rateLimit: {
    open: async () => held(new InMemoryRateLimiter(), 'memory (counted by this instance alone)'),
  },
};
