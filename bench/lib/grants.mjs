// What the bench client is granted: the development client's permissions
// (DEVELOPMENT_CLIENT_PERMISSIONS in src/domain/access/permissions.ts: every case operation
// and queue tokens), read from the built service, so the bench keeps no list of its own.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distUrl } from './paths.mjs';

const PERMISSIONS_MODULE = 'domain/access/permissions.js';

/** This checkout's development grants. */
export const { DEVELOPMENT_CLIENT_PERMISSIONS: DEVELOPMENT_GRANTS } = await import(
  distUrl(PERMISSIONS_MODULE)
);

/**
 * The grants for a baseline checkout's own CLI, read with its own Node: ours, less any
 * permission that checkout does not know (an operation added since), so its `clients add`
 * accepts them.
 */
export function grantsOf(checkout, node) {
  const theirs = join(checkout, 'dist', PERMISSIONS_MODULE);
  if (!existsSync(theirs)) throw new Error(`bench: ${theirs} is missing; build the baseline checkout first`);
  const known = execFileSync(
    node,
    [
      '--input-type=module',
      '-e',
      `const { PERMISSIONS } = await import(${JSON.stringify(pathToFileURL(theirs).href)}); process.stdout.write(PERMISSIONS.join(','));`,
    ],
    { encoding: 'utf8' },
  ).split(',');
  return DEVELOPMENT_GRANTS.filter((permission) => known.includes(permission));
}
