import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // The fault scenarios run by themselves: npm run test:faults (vitest.faults.config.ts); so
    // does the production install (npm run test:production: a build, a pack and an install of
    // minutes, once per CI run rather than once per database and Node).
    exclude: [...configDefaults.exclude, 'test/faults/**', 'test/production-install.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Every answer of the suite is checked: its documented schema, no-store on secrets, nosniff.
    setupFiles: ['test/answer-checks.ts'],
    // Each test file gets its own database (a copy of a migrated template), so files run in
    // parallel without sharing requisite pools; 2 cores → 2 workers.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
