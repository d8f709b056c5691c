// The built service's own command line (dist/app/cli.js), run in this process: how the bench
// makes its PKI, stores, clients, keys and tokens.
import { distUrl } from './paths.mjs';

/**
 * A function running `case-read ARGV...` that resolves to the lines it printed on stdout
 * (its stderr passes through) and rejects unless it exits 0. Loads the built CLI.
 */
export async function loadCaseRead() {
  const { main: cli } = await import(distUrl('app/cli.js'));
  const quiet = { out: () => {}, err: (l) => process.stderr.write(`${l}\n`), env: {}, stderrIsTty: false };
  return async function caseRead(argv) {
    const lines = [];
    const status = await cli(argv, { ...quiet, out: (l) => lines.push(l) });
    if (status !== 0) throw new Error(`case-read ${argv.join(' ')} exited ${status}`);
    return lines;
  };
}
