/**
 * `kassir user`: people who sign in to the console (admin, support, finance).
 */
import type { Command } from 'commander';
import { printObject, printSecret, printTable, text } from './print.js';
import { CliError, type GlobalOptions, id, type JsonObject, output, session } from './session.js';

export function userCommands(program: Command): void {
  const user = program.command('user').description('people who sign in to the console: admin, support, finance');
  const roles = ['admin', 'support', 'finance'];

  user
    .command('create')
    .description('create a sign-in; prints the password once (generated unless --password is given)')
    .requiredOption('--email <email>', 'their email, used to sign in')
    .option('--role <role>', `one of ${roles.join(', ')}`, 'admin')
    .option('--password <password>', 'at least 10 characters; omit to have one generated')
    .action(async (options: { email: string; role: string; password?: string }, command: Command) => {
      if (!roles.includes(options.role)) throw new CliError(`--role must be one of ${roles.join(', ')}, got "${options.role}"`);
      const s = session(command);
      const body: JsonObject = { email: options.email, role: options.role };
      if (options.password !== undefined) body.password = options.password;
      const created = await s.api('POST', '/users', body);
      output(s, created, (u) => {
        printObject(u, ['password']);
        printSecret('Password', u.password);
        const root = command.optsWithGlobals<GlobalOptions>().url.replace(/\/+$/, '');
        // What the console will ask of them first: their own password (when this one was generated), then two-factor (by default required of admin and finance).
        const steps = [
          ...(options.password === undefined ? ['choose their own password'] : []),
          ['admin', 'finance'].includes(options.role) ? 'enrol two-factor' : 'two-factor is offered under "Security"',
        ];
        console.log(`Next: sign in at ${root}/console with ${text(u.email)}; then ${steps.join(', then ')}.`);
      });
    });

  user
    .command('list')
    .description('list sign-ins')
    .option('--role <role>', 'only this role')
    .action(async (options: { role?: string }, command: Command) => {
      const s = session(command);
      const body = await s.api<{ users: JsonObject[] }>('GET', `/users${options.role ? `?role=${encodeURIComponent(options.role)}` : ''}`);
      output(s, body, (b) => printTable(b.users, ['id', 'email', 'role', 'is_active', 'two_factor', 'created_at']));
    });

  user
    .command('reset-password')
    .description('generate a new password for a user (printed once); their sessions end')
    .argument('<id>', 'user id')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api('POST', `/users/${id(userId)}/password`);
      output(s, body, (b) => printSecret('New password', b.password));
    });

  user
    .command('reset-two-factor')
    .description("clear a user's lost second factor; they enrol again at the next sign-in")
    .argument('<id>', 'user id')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const s = session(command);
      await s.api('POST', `/users/${id(userId)}/two-factor/reset`);
      if (!s.json) console.log('Two-factor cleared; the user enrols again at the next sign-in.');
    });

  user
    .command('disable')
    .description('switch a sign-in off; its sessions end at once')
    .argument('<id>', 'user id')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('PATCH', `/users/${id(userId)}`, { is_active: false }), (u) => printObject(u));
    });
}
