import { defineConfig } from 'vitest/config';

/**
 * `npm run test:production` (issue 39 item 1): the one production install path — build, `npm
 * pack`, `npm ci --omit=dev` of the packed release in a temporary folder, the service started on
 * it. Minutes of building and installing: .ci/run runs it once, not with every `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/production-install.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 900_000,
    hookTimeout: 120_000,
  },
});
