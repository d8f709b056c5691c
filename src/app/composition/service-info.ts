/**
 * What the management listener's `/info` says of this service (the estate's convention,
 * decisions §22): its name and version from package.json, the commit it was built from
 * (`GIT_COMMIT`, set by the image build) and the estate's product id (`PRODUCT_ID`), each only
 * when known.
 */
import { createRequire } from 'node:module';
import type { ServiceInfo } from '../../adapters/http/management.js';
import type { Config } from './config.js';

/** package.json, three levels above this file in `src/` and in `dist/` alike. */
const PACKAGE = createRequire(import.meta.url)('../../../package.json') as { name: string; version: string };

export const serviceInfoOf = (config: Pick<Config, 'GIT_COMMIT' | 'PRODUCT_ID'>): ServiceInfo => ({
  build: { name: PACKAGE.name, version: PACKAGE.version },
  ...(config.GIT_COMMIT === undefined ? {} : { git: { commit: { id: config.GIT_COMMIT.toLowerCase() } } }),
  ...(config.PRODUCT_ID === undefined ? {} : { productId: config.PRODUCT_ID }),
});
