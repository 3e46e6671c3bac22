import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { backup, type Manifest, restore } from '../src/backup/backup.js';
import { BackupError, findPgTool } from '../src/backup/pg-tools.js';
import { loadConfig } from '../src/config.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  executorCompletesPayout,
  executorTakesPayout,
  type MerchantCredentials,
  multipartBody,
  notifyTransfer,
  setRate,
  signed,
  signedMultipart,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
} from './helpers.js';

// Issue 39, item 3: a backup restores. A database with money in it (payments completed, a payout
// with its proof, a withdrawal, a dispute with its file, receipts) is backed up with
// `kassir backup`'s code, restored into another database on the same server and another data
// folder, and the restored one is the same: the ledger check passes, every balance and status is
// equal, every stored file is byte for byte equal. A changed manifest or file, and a database that
// is not empty, are refused before anything changes.

const ROOT = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'kassir-backup-'));
const sourceDir = join(work, 'source-data');
const targetDir = join(work, 'target-data');
const backupDir = join(work, 'backup');
const adminUrl = inject('adminDatabaseUrl');

/** Whether this machine has a pg_dump for the server the suite runs on (a PostgreSQL 18 embedded one needs pg_dump 18). */
async function toolsProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const major = Math.floor(Number((await client.query('SHOW server_version_num')).rows[0].server_version_num) / 10000);
  await client.end();
  try {
    findPgTool('pg_dump', major);
    findPgTool('pg_restore', major);
    return undefined;
  } catch (err) {
    if (err instanceof BackupError) return err.message;
    throw err;
  }
}
const missingTools = await toolsProblem();
if (missingTools) console.warn(`backup/restore test skipped: ${missingTools}`);

let service: TestService;
let merchant: MerchantCredentials;
const targets: string[] = [];

async function newDatabase(): Promise<string> {
  const name = `kassir_restore_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  targets.push(name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function rowsOf(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Every file under a folder → its bytes (base64), by relative path. */
function filesOf(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(root, path)] = readFileSync(path).toString('base64');
    }
  };
  if (existsSync(root)) walk(root);
  return out;
}

/** What must be equal after a restore: balances, statuses, the money's records, the files' records. */
const COMPARED = [
  'SELECT kind, terminal_id, executor_id, balance::text FROM ledger_accounts ORDER BY kind, terminal_id NULLS FIRST, executor_id NULLS FIRST',
  'SELECT id, status, amount::text, executor_id FROM payments ORDER BY id',
  'SELECT id, status, amount::text, proof_key FROM payouts ORDER BY id',
  'SELECT id, status, amount::text FROM withdrawals ORDER BY id',
  'SELECT id, status, executor_file_key FROM disputes ORDER BY id',
  'SELECT id, storage_key, sha256 FROM receipts ORDER BY id',
  'SELECT transaction_id, account_id, amount::text FROM ledger_entries ORDER BY id',
  'SELECT name FROM schema_migrations ORDER BY name',
];

beforeAll(async () => {
  if (missingTools) return;
  service = await startTestService({ KASSIR_DATA_DIR: sourceDir });
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { payin_rate: 2.5, payout_rate: 2, withdrawal_fee: 1.5 });
  const executor = await createExecutor(service.app);
  const requisite = await createRequisite(service.app, executor.id);

  // Payments completed by the executor's notification, one with a receipt file uploaded first.
  for (const amount of [1500, 2300]) {
    const { status, body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount });
    expect(status).toBe(200);
    if (amount === 1500) {
      const upload = await signedMultipart(service.app, merchant, `/v1/payments/${body.id}/receipt`, multipartBody({}, { content: TINY_PNG }));
      expect(upload.statusCode, upload.body).toBe(200);
    }
    expect(await notifyTransfer(service.app, executor.token, requisite.id, amount)).toMatchObject({ matched: true });
  }
  // A dispute on a cancelled payment, with its file.
  const { body: disputed } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1700 });
  await adminOk(service.app, 'POST', `/payments/${disputed.id}/cancel`);
  const proof = Buffer.concat([TINY_PNG, randomBytes(2048)]);
  const dispute = await signedMultipart(
    service.app,
    merchant,
    `/v1/payments/${disputed.id}/dispute`,
    multipartBody({}, { content: proof, name: 'statement.png' }),
  );
  expect(dispute.statusCode, dispute.body).toBe(200);

  // Money out: a payout completed with its proof file, and a withdrawal waiting.
  await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 1000, reason: 'test funds' });
  const payout = (
    await signed(service.app, merchant, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId(),
      amount: 5000,
      method: 'card',
      requisites: '4111 1111 1111 1111',
      holder_name: 'Ivan Petrov',
    })
  ).json();
  expect((await executorTakesPayout(service.app, executor.token, payout.id)).statusCode).toBe(200);
  expect((await executorCompletesPayout(service.app, executor.token, payout.id)).statusCode).toBe(200);
  const withdrawal = await signed(service.app, merchant, 'POST', '/v1/withdrawals', {
    terminal_id: merchant.terminalId,
    amount: 100,
    address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  });
  expect(withdrawal.statusCode, withdrawal.body).toBe(200);
  expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  // A generated master key in the data folder, as a first start without KASSIR_MASTER_KEY leaves it.
  writeFileSync(join(sourceDir, 'master.key'), randomBytes(32).toString('base64'));
}, 120_000);

afterAll(async () => {
  await service?.close();
  if (targets.length > 0) {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    for (const name of targets) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
  rmSync(work, { recursive: true, force: true });
});

describe.skipIf(missingTools !== undefined)('kassir backup and kassir restore', () => {
  let manifest: Manifest;

  it('backs up the database, every stored file and the ledger figures, and never the master key', async () => {
    const lines: string[] = [];
    manifest = await backup(service.config, backupDir, (line) => lines.push(line));
    expect(lines.join('\n')).toMatch(/database: .*pg_dump \d+/);
    expect(manifest.ledger.ok).toBe(true);
    expect(manifest.ledger.figures).toMatchObject({ payments: 3, payouts: 1, withdrawals: 1, disputes: 1 });
    expect(manifest.database.schema_migration).toMatch(/^\d{3}_.*\.sql$/);
    expect(manifest.receipts).toEqual({ store: 'local', files: 3 });
    // The receipt, the dispute's file and the payout's proof: every file the store holds.
    expect(Object.keys(manifest.files).filter((name) => name.startsWith('receipts/'))).toHaveLength(3);
    expect(Object.keys(filesOf(join(sourceDir, 'receipts')))).toHaveLength(3);
    expect(Object.values(manifest.files).every((file) => /^[0-9a-f]{64}$/.test(file.sha256))).toBe(true);
    const everything = Object.keys(filesOf(backupDir));
    expect(everything.some((name) => name.includes('master.key'))).toBe(false);
    const key = readFileSync(join(sourceDir, 'master.key'), 'utf8');
    for (const name of everything) expect(readFileSync(join(backupDir, name)).includes(key)).toBe(false);
    expect(manifest.master_key).toMatch(/never beside them/);
  });

  it('refuses a folder that is not empty', async () => {
    await expect(backup(service.config, backupDir, () => undefined)).rejects.toThrow(/is not empty/);
  });

  it('restores into another database and data folder: ledger OK, every balance and status equal, every file byte-equal', async () => {
    const target = await newDatabase();
    const lines: string[] = [];
    const summary = await restore(loadConfig({ DATABASE_URL: target, KASSIR_DATA_DIR: targetDir }), backupDir, (line) => lines.push(line));
    expect(lines[0]).toMatch(/checksums: verifying 4 file/);
    expect(summary.ledger).toMatchObject({ ok: true, problems: [] });
    expect(summary.figuresMatch).toBe(true);
    expect(summary.receipts).toBe(3);
    for (const sql of COMPARED) expect(await rowsOf(target, sql), sql).toEqual(await rowsOf(service.databaseUrl, sql));
    const restoredFiles = filesOf(join(targetDir, 'receipts'));
    expect(Object.keys(restoredFiles)).toHaveLength(3);
    expect(restoredFiles).toEqual(filesOf(join(sourceDir, 'receipts')));
    expect(existsSync(join(targetDir, 'master.key'))).toBe(false);
  }, 120_000);

  it('refuses a changed manifest or a changed file before touching the database', async () => {
    const target = await newDatabase();
    const config = loadConfig({ DATABASE_URL: target, KASSIR_DATA_DIR: join(work, 'tampered-data') });

    const editedManifest = join(work, 'edited-manifest');
    cpSync(backupDir, editedManifest, { recursive: true });
    const text = readFileSync(join(editedManifest, 'manifest.json'), 'utf8');
    const receiptName = Object.keys(manifest.files).find((name) => name.startsWith('receipts/'))!;
    // A checksum swapped for another file's: the manifest's own checksum no longer matches.
    writeFileSync(join(editedManifest, 'manifest.json'), text.replace(manifest.files[receiptName]!.sha256, manifest.files['database.dump']!.sha256));
    await expect(restore(config, editedManifest, () => undefined)).rejects.toThrow(/manifest\.json was changed after the backup was written/);

    const editedFile = join(work, 'edited-file');
    cpSync(backupDir, editedFile, { recursive: true });
    const path = join(editedFile, ...receiptName.split('/'));
    const bytes = readFileSync(path);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    writeFileSync(path, bytes);
    await expect(restore(config, editedFile, () => undefined)).rejects.toThrow(new RegExp(`${receiptName} does not match its checksum`));

    // Nothing was restored: the target is still empty.
    expect(await rowsOf(target, `SELECT 1 FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`)).toEqual([]);
  });

  it('refuses a database that is not empty, with what to do, through the CLI', async () => {
    const cli = await new Promise<{ code: number | null; out: string }>((done) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'src', 'cli.ts'), 'restore', backupDir],
        { cwd: ROOT, env: { ...process.env, DATABASE_URL: service.databaseUrl, KASSIR_DATA_DIR: join(work, 'non-empty-data') }, timeout: 60_000 },
        (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: stdout + stderr }),
      ),
    );
    expect(cli.code).toBe(1);
    expect(cli.out).toMatch(/restore: checksums: every file matches/);
    expect(cli.out).toMatch(
      /kassir restore: the database at .* is not empty \(\d+ table\(s\), e\.g\. .*\): a restore goes into an empty database only\. .*Nothing was changed\./,
    );
    // The source is untouched: its ledger still checks.
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  }, 90_000);
});

describe('without the PostgreSQL client tools the server needs', () => {
  it('says which version to install and how', () => {
    expect(() => findPgTool('pg_dump', 99, { PATH: '' })).toThrow(/pg_dump version 99 or newer is needed.*apt-get install postgresql-client-99.*KASSIR_PG_BIN/);
  });
});
