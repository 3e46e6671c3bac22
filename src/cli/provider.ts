/**
 * `kassir provider`: upstream providers that payments and payouts can be routed to.
 */
import type { Command } from 'commander';
import { bool, pick, requireChanges } from './args.js';
import { printObject, printTable, text } from './print.js';
import { id, type JsonObject, output, session } from './session.js';

const PROVIDER_COLUMNS = ['id', 'name', 'kind', 'base_url', 'is_active', 'failures', 'open_until', 'callback_url'];

/** A provider row for a table: its breaker state flattened into columns. */
function providerRow(p: JsonObject): JsonObject {
  const breaker = (p.breaker ?? {}) as JsonObject;
  return { ...p, failures: breaker.failures ?? null, open_until: breaker.open_until ?? null };
}

export function providerCommands(program: Command): void {
  const provider = program.command('provider').description('upstream providers: aggregators that payments and payouts can be routed to');

  provider
    .command('add')
    .description('register a provider with our merchant credentials there (stored encrypted)')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--kind <kind>', 'kassir: a provider speaking the Kassir merchant API')
    .requiredOption('--base-url <url>', "the provider's API base URL, e.g. https://provider.example")
    .requiredOption('--api-key <key>', 'our terminal API key at the provider')
    .requiredOption('--secret-key <key>', 'our Secret Key at the provider')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = pick(options, { name: 'name', kind: 'kind', baseUrl: 'base_url', apiKey: 'api_key', secretKey: 'secret_key' });
      const created = await s.api('POST', '/providers', body);
      output(s, created, (p) => {
        printObject(p);
        console.log(`\nNext: kassir terminal set-routes <terminal> --route provider:${text(p.id)} --route executors`);
      });
    });

  provider
    .command('list')
    .description('providers, with their circuit breaker state')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ providers: JsonObject[] }>('GET', '/providers');
      output(s, body, (b) => printTable(b.providers.map(providerRow), PROVIDER_COLUMNS));
    });

  provider
    .command('update')
    .description("change a provider's settings or credentials, or switch it on or off")
    .argument('<id>', 'provider id')
    .option('--name <name>', 'display name')
    .option('--base-url <url>', "the provider's API base URL")
    .option('--api-key <key>', 'our terminal API key at the provider')
    .option('--secret-key <key>', 'our Secret Key at the provider')
    .option('--active <true|false>', 'in rotation or not (true also resets its circuit breaker)', bool)
    .action(async (providerId: string, options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = requireChanges(
        pick(options, { name: 'name', baseUrl: 'base_url', apiKey: 'api_key', secretKey: 'secret_key', active: 'is_active' }),
        '--name, --base-url, --api-key, --secret-key, --active',
      );
      output(s, await s.api('PATCH', `/providers/${id(providerId)}`, body), (p) => printObject(p));
    });
}
