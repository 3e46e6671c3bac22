import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults` (issue 15): scenarios that kill service processes and stop the database
 * under load (test/faults). Each starts its own embedded PostgreSQL and its own instances of
 * `node dist/main.js`, so they run one at a time; each prints its figures.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
