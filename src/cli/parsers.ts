/**
 * `kassir parsers`: the bank message forms people taught (docs/devices.md "Teaching a new message form").
 */
import type { Command } from 'commander';
import { printTable } from './print.js';
import { type JsonObject, output, session } from './session.js';

export function parserCommands(program: Command): void {
  const parsers = program.command('parsers').description('bank message forms people taught in the console');

  parsers
    .command('forms')
    .description('taught forms, newest first, with their status and live version')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ forms: JsonObject[] }>('GET', '/parser-forms');
      output(s, body, (b) => printTable(b.forms, ['id', 'name', 'bank', 'currency', 'status', 'live_version', 'created_by', 'created_at']));
    });

  parsers
    .command('export-forms')
    .description('the live forms as corpus lines (src/incoming/parsers/corpus/<bank>.tsv), one section per bank, for a release to learn them')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      process.stdout.write(await s.text('/parser-forms/export'));
    });
}
