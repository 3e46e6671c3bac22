/**
 * `kassir device`: executors' phones that forward bank messages (docs/devices.md).
 */
import type { Command } from 'commander';
import { printObject, printSecret, printTable, text } from './print.js';
import { type GlobalOptions, id, type JsonObject, output, session } from './session.js';

export function deviceCommands(program: Command): void {
  const device = program.command('device').description("executors' phones that forward bank messages (docs/devices.md)");

  device
    .command('register')
    .description("register a phone for an executor; prints its token and signing secret once, and the forwarder apps' URLs")
    .requiredOption('--executor <id>', 'executor id')
    .requiredOption('--name <name>', 'a name to know the phone by ("Redmi 12, Sber")')
    .action(async (options: { executor: string; name: string }, command: Command) => {
      const s = session(command);
      const created = await s.api('POST', `/executors/${id(options.executor)}/devices`, { name: options.name });
      output(s, created, (d) => {
        printObject(d, ['token', 'signing_secret']);
        printSecret('Device token (for the phone)', d.token);
        printSecret('Signing secret (for a forwarder app)', d.signing_secret);
        const root = command.optsWithGlobals<GlobalOptions>().url.replace(/\/+$/, '');
        console.log('Forwarder apps post to (docs/devices.md):');
        for (const format of ['smsforwarder', 'sms-gateway', 'incoming-sms']) console.log(`  ${root}/device/v1/hooks/${text(d.token)}/${format}`);
      });
    });

  device
    .command('list')
    .description("an executor's phones with when each last reported")
    .requiredOption('--executor <id>', 'executor id')
    .action(async (options: { executor: string }, command: Command) => {
      const s = session(command);
      const body = await s.api<{ devices: JsonObject[] }>('GET', `/executors/${id(options.executor)}/devices`);
      output(s, body, (b) => printTable(b.devices, ['id', 'name', 'last_seen_at', 'battery', 'app_version', 'created_at']));
    });

  device
    .command('revoke')
    .description('revoke a phone: its token stops working at once')
    .requiredOption('--executor <id>', 'executor id')
    .argument('<device>', 'device id')
    .action(async (deviceId: string, options: { executor: string }, command: Command) => {
      const s = session(command);
      await s.api('DELETE', `/executors/${id(options.executor)}/devices/${id(deviceId)}`);
      if (!s.json) console.log('Revoked.');
    });
}
