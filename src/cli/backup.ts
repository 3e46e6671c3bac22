/**
 * `kassir backup <dir>` and `kassir restore <dir>`. Unlike every other command these do not call
 * the operator API: they read the service's own settings (DATABASE_URL, KASSIR_DATA_DIR, the
 * KASSIR_S3_* of the receipt store) from the environment, as the service does, and run
 * PostgreSQL's pg_dump and pg_restore. So they run on the service's machine (or a container of
 * its image) with its environment. The code behind them (src/backup/) is loaded only when one of
 * them runs, so that the other commands still start without loading the server's modules.
 */
import type { Command } from 'commander';
import { printObject } from './print.js';
import { CliError } from './session.js';

async function load() {
  const [{ loadConfig, ConfigError }, backupModule] = await Promise.all([import('../config.js'), import('../backup/backup.js')]);
  try {
    return { config: loadConfig(process.env), ...backupModule };
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`kassir: ${err.message}`);
    throw err;
  }
}

/** Progress as it happens: one line per step, on stderr so that --json output stays parseable. */
function progress(command: string) {
  return (line: string) => process.stderr.write(`${command}: ${line}\n`);
}

export function backupCommands(program: Command): void {
  program
    .command('backup')
    .description(
      "write a backup into <dir> (new or empty): pg_dump of the service's database, the receipt files, a manifest with checksums and the ledger's figures; reads DATABASE_URL and KASSIR_DATA_DIR like the service",
    )
    .argument('<dir>', 'folder to write the backup into')
    .action(async (dir: string, _options: unknown, command: Command) => {
      const { config, backup, masterKeyReminder, BackupError } = await load();
      try {
        const manifest = await backup(config, dir, progress('backup'));
        if (command.optsWithGlobals().json) {
          console.log(JSON.stringify(manifest, null, 2));
          return;
        }
        console.log('');
        printObject({
          backup: dir,
          created_at: manifest.created_at,
          kassir_version: manifest.kassir_version,
          schema_migration: manifest.database.schema_migration,
          database_size_bytes: manifest.database.size_bytes,
          files: Object.keys(manifest.files).length,
          receipts:
            manifest.receipts.store === 'local'
              ? `${manifest.receipts.files} file(s)`
              : `S3 bucket ${manifest.receipts.bucket} (${manifest.receipts.keys.length} keys)`,
          ledger: manifest.ledger.ok ? 'OK' : `${manifest.ledger.problems.length} problem(s)`,
        });
        console.log(`\n${masterKeyReminder(config)}`);
        if (!manifest.ledger.ok) process.exitCode = 1;
      } catch (err) {
        if (err instanceof BackupError) throw new CliError(`kassir backup: ${err.message}`);
        throw err;
      }
    });

  program
    .command('restore')
    .description(
      "restore a backup from <dir> into the service's database, which must be empty, and its receipt store: checksums first, then pg_restore, the receipt files, and the ledger check",
    )
    .argument('<dir>', 'folder written by kassir backup')
    .action(async (dir: string, _options: unknown, command: Command) => {
      const { config, restore, masterKeyReminder, BackupError } = await load();
      try {
        const summary = await restore(config, dir, progress('restore'));
        if (command.optsWithGlobals().json) {
          console.log(JSON.stringify({ ledger: summary.ledger, figures_match: summary.figuresMatch, receipts: summary.receipts }, null, 2));
        } else {
          console.log('');
          printObject({
            restored_from: dir,
            backup_of: summary.manifest.created_at,
            schema_migration: summary.manifest.database.schema_migration,
            receipts: summary.manifest.receipts.store === 'local' ? `${summary.receipts} file(s)` : `S3 bucket ${summary.manifest.receipts.bucket}`,
            ledger: summary.ledger.ok ? 'OK' : `${summary.ledger.problems.length} problem(s)`,
            figures: summary.figuresMatch ? "equal to the backup's" : "DIFFERENT from the backup's (see below)",
            transactions: summary.ledger.figures.transactions,
            payments: summary.ledger.figures.payments,
            payouts: summary.ledger.figures.payouts,
            disputes: summary.ledger.figures.disputes,
          });
          for (const problem of summary.ledger.problems) console.log(`${problem.invariant}: ${problem.detail}`);
          if (!summary.figuresMatch) {
            console.log(`\nbackup:   ${JSON.stringify(summary.manifest.ledger.figures)}\nrestored: ${JSON.stringify(summary.ledger.figures)}`);
          }
          console.log(`\n${masterKeyReminder(config)}`);
        }
        if (!summary.ledger.ok || !summary.figuresMatch) process.exitCode = 1;
      } catch (err) {
        if (err instanceof BackupError) throw new CliError(`kassir restore: ${err.message}`);
        throw err;
      }
    });
}
