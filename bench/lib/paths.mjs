// Where the bench finds the project and puts what it writes.
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The checkout this bench belongs to: servers are started from here. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The results JSON of every run. */
export const RESULTS_DIR = join(ROOT, 'bench/results');
/** Where `--cpu-prof` has the service write its profiles. */
export const PROFILE_DIR = join(RESULTS_DIR, 'profiles');
/** The URL of a module of the built service, for import(): `distUrl('app/cli.js')`. */
export const distUrl = (path) => pathToFileURL(join(ROOT, 'dist', path)).href;
