/** The runtimes `serve` is tested on, as commands (shared with the benchmark). */
export { BUN, CURRENT, DENO, NODE, RUNTIMES, type RuntimeCommand } from '../../scripts/runtimes.mjs';
