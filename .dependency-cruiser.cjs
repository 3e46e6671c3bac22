/**
 * The project's seams, checked by `npm run lint` (dependency-cruiser): no import cycles, features
 * never reach into the HTTP edge, the shared libraries never into features, providers are
 * adapters that payments and payouts use — never the reverse — and the folders of src/ point one
 * way: LAYERS below, lowest first.
 */

/**
 * The folders of src/, lowest first (issue 32 item 1; CONVENTIONS.md "Folders point one way"). A
 * folder imports only folders of lower layers: never a higher one, never one beside it in its own
 * layer. The files at src/ itself (context.ts, instance.ts, config.ts, errors.ts, …) are the
 * composition root and the shared types, outside the layers. A new folder goes into the lowest
 * layer above everything it imports; a lower folder that needs something of a higher one is
 * handed it (a type moved to its owner, a function passed in by the composition root or the caller).
 */
const LAYERS = [
  ['lib'], // shared helpers: money, crypto, validators, the Actor
  ['db'], // the pool, transactions, migrations, the repeatable database functions
  ['admin', 'ledger', 'chain', 'jobs', 'notify'], // the core: the audit log, the ledger, the chain client, the job queue (src/jobs.ts registers each feature's jobs), the people's message outbox
  ['observability', 'receipts', 'auth', 'banks', 'rates', 'webhooks', 'risk'], // reference data, the webhook outbox, the risk rules
  ['requisites', 'terminals'], // what the executors and the merchants own
  ['executors', 'providers', 'transfers'], // executors and their balances, provider adapters, terminal-to-terminal transfers
  ['merchants', 'withdrawals'], // the merchant and the identity a request carries; USDT withdrawals
  ['payments', 'payouts'], // the money in (with its cascade, payments/cascade/) and out
  ['incoming', 'pages'], // incoming money (bank messages, notifications, late money); the hosted payment page
  ['devices', 'disputes'], // the phones that report incoming money; disputes on payments
  ['reports', 'backup'], // views over many features (a payment's timeline, the dashboard, reports); backups and restores (kassir backup/restore)
  ['cabinet', 'telegram'], // the merchant cabinet and the Telegram bot: audiences' edges over many features
  ['http', 'cli'], // the HTTP edge: auth, error mapping, the routes of every feature; the operator CLI, a client of the API
];

const folders = (list) => `^src/(${list.join('|')})/`;
const layerRules = LAYERS.flatMap((layer, i) => {
  const higher = LAYERS.slice(i + 1).flat();
  const rules = [];
  if (higher.length > 0) {
    rules.push({
      name: `layer-${i}-not-up`,
      comment: `${layer.join(', ')} may not import a higher layer (${higher.join(', ')}): see LAYERS.`,
      severity: 'error',
      from: { path: folders(layer) },
      to: { path: folders(higher) },
    });
  }
  for (const folder of layer) {
    const beside = layer.filter((other) => other !== folder);
    if (beside.length === 0) continue;
    rules.push({
      name: `layer-${i}-${folder}-not-beside`,
      comment: `${folder} may not import a folder of its own layer (${beside.join(', ')}): move one of them up, see LAYERS.`,
      severity: 'error',
      from: { path: `^src/${folder}/` },
      to: { path: folders(beside) },
    });
  }
  return rules;
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'every-folder-has-a-layer',
      comment: 'A folder of src/ that is in no layer of LAYERS: put it in one.',
      severity: 'error',
      from: { path: `^src/(?!(${LAYERS.flat().join('|')})/)[^/]+/` },
      to: {},
    },
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
