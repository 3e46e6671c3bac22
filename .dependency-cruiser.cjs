/**
 * The project's seams, checked by `npm run lint` (dependency-cruiser): no import cycles, features
 * never reach into the HTTP edge, the shared libraries never into features, and providers are
 * adapters that payments and payouts use — never the reverse.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A cycle means two modules cannot be read, tested or changed apart.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'features-not-http',
      comment:
        'Features throw DomainError and take plain values; only src/http/ (and the composition files at src/*.ts) know Fastify status codes, bodies and hooks.',
      severity: 'error',
      from: { path: '^src/(?!http/|lib/|db/)[^/]+/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'lib-is-shared',
      comment: 'src/lib/ and src/db/ are used by every feature and depend on none.',
      severity: 'error',
      from: { path: '^src/(lib|db)/' },
      to: { path: '^src/(?!lib/|db/|errors\\.ts|config\\.ts)' },
    },
    {
      name: 'providers-are-adapters',
      comment: 'Payments and payouts call providers and record what they answer; providers never call back into them.',
      severity: 'error',
      from: { path: '^src/providers/' },
      to: { path: '^src/(payments|payouts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
