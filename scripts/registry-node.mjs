// The pinned release of a Node line from the npm registry, for JavaScript: what
// `scripts/registry-node.sh LINE` prints (it fetches the release once, into its cache). Used by
// scripts/test-runtimes.mjs and the production-install test.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('registry-node.sh', import.meta.url));

/** The directory of `line`'s pinned release (its `bin/node`, its `include/node`). Throws what the script said. */
export function registryNode(line) {
  const found = spawnSync('bash', [script, line], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (found.status !== 0) {
    throw new Error(`scripts/registry-node.sh ${line}: ${found.stderr.trim() || `exit ${found.status}`}`);
  }
  return found.stdout.trim();
}
