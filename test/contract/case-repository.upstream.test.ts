import { upstreamStores } from '../../src/adapters/upstream-http/store-kind.js';
import { testContext } from '../support/stores.js';
import { startUpstreamInstance, upstreamSettings } from '../support/upstream.js';
import { describeCaseRepositoryContract } from './case-repository.contract.js';

// The upstream is a second instance of this service, over mutual TLS with an API key and a
// bearer token, serving the records from SQLite.
describeCaseRepositoryContract(
  'upstream-http',
  async (records) => {
    const upstream = await startUpstreamInstance(records);
    const opened = await upstreamStores.cases?.open(upstream.url, {
      ...testContext,
      settings: upstreamSettings(upstream),
    });
    if (!opened) throw new Error('the upstream store cannot hold cases');
    return {
      repository: opened.value,
      close: async () => {
        await opened.close();
        await upstream.close();
      },
    };
  },
  { decidesLimitedAccess: true },
);
