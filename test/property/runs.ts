/**
 * How often each property runs (docs/testing.md#property-based-tests). Every property names
 * its own number of runs, chosen so the whole folder stays within about 20 s of `npm test` on
 * the 2-core machine; these variables change that for a longer or a replayed run:
 *
 * - `FC_NUM_RUNS=N`: every property runs N times instead (and no test times out);
 * - `FC_SEED=S` and `FC_PATH=P`: replay the failure fast-check printed (`seed: S, path: "P"`)
 *   straight to its shrunk counterexample. The seed is never fixed otherwise: each run tries
 *   new inputs, and a failure prints the seed that reproduces it.
 *
 * A value that is not one of these forms stops the run, naming the variable.
 */

const env = process.env;

function integerOf(name: string, min: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!/^-?[0-9]+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min) {
    throw new Error(`${name} must be a whole number of at least ${min}, not ${JSON.stringify(raw)}`);
  }
  return value;
}

/** `FC_NUM_RUNS`, when set: every property's number of runs. */
export const NUM_RUNS_OVERRIDE = integerOf('FC_NUM_RUNS', 1);
const SEED = integerOf('FC_SEED', -(2 ** 31));
const PATH = env.FC_PATH === undefined || env.FC_PATH === '' ? undefined : env.FC_PATH;

/** The fast-check parameters set here: how many runs, and the seed and path of a replay. */
export interface RunParameters {
  readonly numRuns: number;
  readonly seed?: number;
  readonly path?: string;
  readonly endOnFailure?: boolean;
}

/**
 * The parameters of a property that runs `numRuns` times in `npm test` (`FC_NUM_RUNS`,
 * `FC_SEED` and `FC_PATH` applied).
 */
export function runs(numRuns: number): RunParameters {
  return {
    numRuns: NUM_RUNS_OVERRIDE ?? numRuns,
    ...(SEED !== undefined ? { seed: SEED } : {}),
    ...(PATH !== undefined ? { path: PATH, endOnFailure: true } : {}),
  };
}

/** The test timeout for a property: vitest's own (30 s) in `npm test`, none with `FC_NUM_RUNS`. */
export const TIMEOUT: number | undefined = NUM_RUNS_OVERRIDE === undefined ? undefined : 0;

/**
 * The seed for inputs generated in one batch with `fc.sample` (those checked by Go in one
 * process, which cannot shrink): `FC_SEED` when set, else a new one each run, which the test
 * puts in its failure message.
 */
export const batchSeed = (): number => SEED ?? (Date.now() ^ (Math.random() * 2 ** 32)) | 0;
