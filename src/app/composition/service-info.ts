/**
 * What the management listener's `/info` says of this service (the estate's convention,
 * decisions §22), and the two variables it reads: its name and version from package.json, the
 * commit it was built from (`GIT_COMMIT`, set by the image build) and the estate's product id
 * (`PRODUCT_ID`), each only when set. config/service.ts reads and checks the variables with its own.
 */
import { createRequire } from 'node:module';
import * as z from 'zod';
import type { ServiceInfo } from '../../adapters/http/management.js';

/** package.json, three levels above this file in `src/` and in `dist/` alike. */
const PACKAGE = createRequire(import.meta.url)('../../../package.json') as { name: string; version: string };

/** The variables' rules, spread into config/service.ts's schema: a bad value is refused at start, named. */
export const SERVICE_INFO_VARIABLES = {
  // Any text of 1 to 64 characters but a control character (an empty variable is unset).
  PRODUCT_ID: z
    .string()
    .regex(/^\P{Cc}{1,64}$/u, { error: 'expected 1 to 64 characters, none of them a control character' })
    .optional(),
  GIT_COMMIT: z
    .string()
    .regex(/^[0-9a-f]{7,40}$/i, { error: 'expected a git commit: 7 to 40 hex digits' })
    .optional(),
};

/** `/info`'s answer from the variables as read: a field that is unset is left out, never made up. */
export const serviceInfoOf = (values: {
  readonly GIT_COMMIT?: string | undefined;
  readonly PRODUCT_ID?: string | undefined;
}): ServiceInfo => ({
  build: { name: PACKAGE.name, version: PACKAGE.version },
  ...(values.GIT_COMMIT === undefined ? {} : { git: { commit: { id: values.GIT_COMMIT.toLowerCase() } } }),
  ...(values.PRODUCT_ID === undefined ? {} : { productId: values.PRODUCT_ID }),
});
