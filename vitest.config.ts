import { defineConfig } from 'vitest/config';

/**
 * Which test files may run beside which (docs/testing.md#which-files-run-beside-which).
 *
 * These put load on the machine (keep-alive loops, bursts of hundreds of requests, the
 * benchmark's load generator, 20,000 requests and an archive beside them) or judge what happens in time (a deadline, a drain, a
 * revocation reaching two instances within a second, a connection kept idle a second short
 * of its timeout, HAProxy's health checks during a rolling restart). They run one at a
 * time, after everything else, so none competes with another file for the two cores.
 */
const ALONE = [
  'test/e2e/slow-engines.test.ts',
  'test/e2e/haproxy.test.ts',
  'test/e2e/keep-alive.test.ts',
  'test/app/scale-out.test.ts',
  'test/app/shutdown.test.ts',
  'test/bench/smoke.test.ts',
  'test/e2e/audit-archive.test.ts',
];

/** The property-based tests of the parsers of outside input (decisions record 23). */
const PROPERTY = 'test/property/**/*.test.ts';

export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    // The margins below hold on a machine twice as slow as the 2-core one this runs on, with
    // another file beside each one in the first group.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'beside',
          include: ['test/**/*.test.ts'],
          exclude: [...ALONE, PROPERTY],
          // The rest, two at a time on the two cores: in-process tests, and the files that
          // start `serve` or the CLI but judge nothing by time.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'property',
          include: [PROPERTY],
          // The property-based tests (docs/testing.md#property-based-tests), two at a time, in
          // workers that load @fast-check/vitest once: it takes about 3 s to load (it builds its
          // `test.prop` over every chain of vitest's modifiers), most of their time when each
          // file loaded it. Nothing in them keeps state from one file to the next.
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
