import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // One more worker than the machine's two cores: the end-to-end files spend most of their
    // time waiting (a balancer's health checks, a drain's delay), and a waiting file would
    // otherwise hold one of the two workers.
    maxWorkers: 3,
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
