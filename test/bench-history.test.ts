/**
 * The history of bench figure (d) (bench/history.ts, docs/performance.md "History at 10^7 rows"):
 * written with the triggers off and most indexes dropped and built again afterwards, it must leave
 * the database as the service would have: the same indexes (names, definitions, valid), every row
 * it says it wrote, and a ledger the service's own check finds balanced, the accounts' balances
 * moved by the entries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertHistory } from '../bench/history.js';
import {
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  expectLedgerOk,
  type MerchantCredentials,
  setRate,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let shop: MerchantCredentials;

const TABLES = ['payments', 'ledger_transactions', 'ledger_entries', 'webhook_events', 'webhook_attempts', 'notifications', 'device_messages'];

/** Every index of the history's tables and their partitions: name → definition and validity. */
async function indexes(): Promise<Record<string, string>> {
  const { rows } = await service.ctx.db.query<{ name: string; definition: string; valid: boolean }>(
    `SELECT ic.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, i.indisvalid AS valid
       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
      WHERE i.indrelid = ANY($1::regclass[])
         OR i.indrelid IN (SELECT p.inhrelid FROM pg_inherits p WHERE p.inhparent = ANY($1::regclass[]))`,
    [TABLES],
  );
  return Object.fromEntries(rows.map((r) => [r.name, `${r.definition}${r.valid ? '' : ' (INVALID)'}`]));
}

async function count(table: string): Promise<number> {
  return (await service.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
}

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 95.5);
  shop = await createMerchant(service.app);
  await createMerchant(service.app);
  for (let i = 0; i < 3; i++) {
    // Funded as the bench funds them: the completed payments' holds leave the executors' deposits.
    const executor = await createExecutor(service.app, `Trader ${i + 1}`, { deposit: 100_000_000 });
    for (let j = 0; j < 2; j++) await createRequisite(service.app, executor.id, { max_amount: 300000 });
  }
  // A live payment already in the tables, as (a)–(c) leave the bench's.
  const { status } = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: 1500, method: 'CARD' });
  expect(status).toBe(200);
});

afterAll(async () => {
  await service?.close();
});

describe('the bench history', () => {
  it('writes what it counts, leaves every index as it found it and the ledger balanced', async () => {
    const before = await indexes();
    const rowsBefore = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await count(t)] as const)));
    const result = await insertHistory(service.databaseUrl, { rows: 20_000, days: 30, chunk: 3_000, workers: 2 });

    // Most of them were dropped and built again; some kept (the open rows', the jobs').
    expect(result.indexes).toBeGreaterThan(10);
    expect(await indexes()).toEqual(before);
    for (const table of TABLES) expect({ table, rows: (await count(table)) - rowsBefore[table]! }).toEqual({ table, rows: result.counts[table] });
    expect(result.counts.payments).toBe(20_000);
    await expectLedgerOk(service.app);

    // Its ids and page tokens as production makes them (migration 060, src/lib/ids.ts): version 7
    // uuids of each row's created_at, page tokens starting with it — so the live creates' entries
    // land after the history's, on the indexes' newest leaves, as they would in production.
    const { rows: made } = await service.ctx.db.query<{ table: string; wrong: number; out_of_order: number }>(
      `WITH r AS (
         SELECT 'payments' AS t, id, created_at FROM payments WHERE ext_id LIKE 'hist-%'
         UNION ALL SELECT 'ledger_transactions', t.id, t.created_at FROM ledger_transactions t JOIN payments p ON p.id = t.ref_id WHERE p.ext_id LIKE 'hist-%'
         UNION ALL SELECT 'webhook_events', w.id, w.created_at FROM webhook_events w JOIN payments p ON p.id = w.resource_id WHERE p.ext_id LIKE 'hist-%'
         UNION ALL SELECT 'notifications', n.id, n.created_at FROM notifications n JOIN payments p ON p.id IN (n.payment_id, n.candidate_payment_id) WHERE p.ext_id LIKE 'hist-%'
       )
       SELECT t AS table,
              count(*) FILTER (WHERE substr(id::text, 15, 1) <> '7'
                                  OR ('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint <> floor(extract(epoch FROM created_at) * 1000))::int AS wrong,
              count(*) FILTER (WHERE previous > id)::int AS out_of_order
         FROM (SELECT t, id, created_at, lag(id) OVER (PARTITION BY t ORDER BY created_at, id) AS previous FROM r) x
        GROUP BY t ORDER BY t`,
    );
    expect(made).toEqual(['ledger_transactions', 'notifications', 'payments', 'webhook_events'].map((table) => ({ table, wrong: 0, out_of_order: 0 })));
    const { rows: tokens } = await service.ctx.db.query<{ wrong: number; newest: string }>(
      `SELECT count(*) FILTER (WHERE page_token !~ '^[0-9a-f]{12}[A-Za-z0-9_-]{32}$'
                                  OR ('x' || left(page_token, 12))::bit(48)::bigint <> floor(extract(epoch FROM created_at) * 1000))::int AS wrong,
              max(id::text) AS newest
         FROM payments WHERE ext_id LIKE 'hist-%'`,
    );
    expect(tokens[0]!.wrong).toBe(0);

    // The service still creates on it (the arbiters and the indexes the create reads are there),
    // and its new payment sorts after the whole history.
    const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: 2500, method: 'CARD' });
    expect(status).toBe(200);
    expect(body.id > tokens[0]!.newest).toBe(true);
  });
});
