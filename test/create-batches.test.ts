/**
 * Payment creates taken together (src/payments/cascade/create-batches.ts, migration 034): creates that
 * queue behind the statements in progress go as one statement, and each comes out as it would
 * alone — its own ext_id and same-amount rules, never waiting for a lock while the batch holds
 * others, run again alone when its batch could not take it or failed.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CREATE_BATCH_SLOW_MS } from '../src/config.js';
import { CONNECTION_TIMEOUT_MS, DatabaseWaitTimeout, isDatabaseUnavailable } from '../src/db/pool.js';
import { payinHold } from '../src/ledger/credit.js';
import type { CreateSending } from '../src/observability/metrics.js';
import type { NewPayment } from '../src/payments/cascade/cascade.js';
import { type CascadeOutcome, insertPaymentWithCascade } from '../src/payments/cascade/cascade.repo.js';
import { CreateBatches } from '../src/payments/cascade/create-batches.js';
import {
  createExecutor,
  createMerchant,
  createRequisite,
  createsSent,
  expectLedgerOk,
  type MerchantCredentials,
  setRate,
  signed,
  sqlOf,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;

const sql = sqlOf(() => service);

beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '2' });
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app, { payin_rate: 2 });
});
afterAll(async () => service?.close());

// Every test lays out its own pool: the requisites of earlier tests are switched off.
beforeEach(async () => {
  await sql('UPDATE requisites SET is_active = false');
});

/** A create as the service makes it for a RUB card payment of `amount` through the window. */
function newPayment(amount: number, overrides: Partial<NewPayment> = {}): NewPayment {
  const fixed = amount.toFixed(2);
  return {
    merchantId: merchant.merchantId,
    terminalId: merchant.terminalId,
    terminalName: 'Main',
    extId: uniqueExtId('batch'),
    amount: fixed,
    currency: 'RUB',
    method: 'CARD',
    rate: '100',
    rateRefreshId: null,
    payinRate: '2',
    crossBorder: false,
    clientId: null,
    clientLimit: null,
    notifyUrl: null,
    notificationToken: null,
    pageToken: uniqueExtId('page'),
    ttlSeconds: 900,
    hold: payinHold(fixed, '100').toFixed(),
    types: ['card'],
    bank: null,
    candidates: [{ currency: 'RUB', country: 'RU', payerAmount: fixed }],
    ...overrides,
  };
}

/**
 * Batches of at most 16, one statement in progress at a time, counting how each create went. A
 * statement counts as in progress until it ends unless `slowMs` is given.
 */
function batches(slowMs = 60_000): { creates: CreateBatches; sent: Record<CreateSending, number>; statements: number } {
  const counts = { sent: { alone: 0, together: 0, again: 0 } as Record<CreateSending, number>, statements: 0 };
  const metrics = {
    createsSent(how: CreateSending, n: number) {
      counts.sent[how] += n;
      if (how === 'together') counts.statements++;
    },
  };
  const creates = new CreateBatches(service.ctx.db, service.ctx.log, metrics, { maxItems: 16, maxInFlight: 1, slowMs, sameAmountLimit: 2 });
  return Object.assign(counts, { creates });
}

/** An executor with `cards` fresh requisites; its id and theirs. */
async function executorWithCards(cards: number, name = 'Batcher'): Promise<{ id: string; requisites: string[] }> {
  const executor = await createExecutor(service.app, name);
  const requisites: string[] = [];
  for (let i = 0; i < cards; i++) requisites.push((await createRequisite(service.app, executor.id, { max_amount: null })).id);
  return { id: executor.id, requisites };
}

/** The pid of the backend running `statement` once it waits for a lock. */
function waitForLockWait(statement: string): Promise<number> {
  return until(
    async () => {
      const [row] = await sql<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        [statement],
      );
      return row?.pid;
    },
    5_000,
    50,
    `a backend running ${statement} waiting for a lock`,
  );
}

/**
 * A transaction on a connection of its own holding the terminal-and-amount lock of `amount` on
 * the merchant's terminal, as a create of that amount in progress does; COMMIT lets it go.
 */
async function holdCreationLock(amount: string): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: service.databaseUrl });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT pg_advisory_xact_lock(payment_creation_lock_key($1, $2))', [merchant.terminalId, amount]);
  return holder;
}

const createdIds = (outcomes: CascadeOutcome[]) => outcomes.filter((o) => o.payment).map((o) => o.payment!.id);

describe('creates taken together', () => {
  it('creates queued behind one in progress go as one statement, each handed a requisite with its hold', async () => {
    await executorWithCards(6);
    await executorWithCards(6);
    const b = batches();
    // The first goes at once, alone; the other eleven queue behind it and go together.
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => b.creates.window(newPayment(1000 + i))));
    expect(b.sent).toEqual({ alone: 1, together: 11, again: 0 });
    expect(b.statements).toBe(1);

    const ids = createdIds(outcomes);
    expect(ids).toHaveLength(12);
    const rows = await sql<{ requisite_id: string; hold: string; amount: string; posted: string }>(
      `SELECT p.requisite_id, p.hold::text, p.amount::text,
              (SELECT e.amount::text FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                WHERE t.kind = 'payin_hold' AND t.ref_id = p.id AND e.amount > 0) AS posted
         FROM payments p WHERE p.id = ANY($1::uuid[])`,
      [ids],
    );
    // Twelve cards for twelve creates: each its own, least recently used first.
    expect(new Set(rows.map((r) => r.requisite_id)).size).toBe(12);
    for (const row of rows) {
      expect(payinHold(row.amount, '100').eq(row.hold), `hold ${row.hold} of ${row.amount}`).toBe(true);
      expect(payinHold(row.amount, '100').eq(row.posted), `posted ${row.posted} of ${row.amount}`).toBe(true);
    }
    await expectLedgerOk(service.app);
  });

  it('keeps the rules between the creates of one batch: one ext_id once, SAME_AMOUNT_LIMIT pending of an amount', async () => {
    await executorWithCards(8);
    const b = batches();
    const twice = uniqueExtId('twice');
    const outcomes = await Promise.all([
      b.creates.window(newPayment(2000)),
      b.creates.window(newPayment(2001, { extId: twice })),
      b.creates.window(newPayment(2002, { extId: twice })),
      // SAME_AMOUNT_LIMIT is 2: the third of one amount on the terminal is refused.
      b.creates.window(newPayment(2003)),
      b.creates.window(newPayment(2003)),
      b.creates.window(newPayment(2003)),
    ]);
    expect(b.sent).toEqual({ alone: 1, together: 5, again: 0 });
    expect(outcomes.map((o) => Boolean(o.payment))).toEqual([true, true, false, true, true, false]);
    expect(outcomes[2]!.facts.ext_id_taken).toBe(true);
    expect(outcomes[5]!.facts).toMatchObject({ same_amount: 2, ext_id_taken: false, client_refused: false });
  });

  it('a create whose terminal-and-amount lock another transaction holds is run again alone, waiting, and the rest do not wait for it', async () => {
    await executorWithCards(4);
    const b = batches();
    const holder = await holdCreationLock('3001.00');
    try {
      const first = b.creates.window(newPayment(3000));
      const blocked = b.creates.window(newPayment(3001));
      const free = b.creates.window(newPayment(3002));
      const settled = { blocked: false };
      void blocked.then(() => {
        settled.blocked = true;
      });
      expect((await first).payment).toBeDefined();
      expect((await free).payment).toBeDefined();
      expect(b.sent).toEqual({ alone: 1, together: 2, again: 1 });
      // Alone, it waits for the lock, as every create does.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled.blocked).toBe(false);
      await holder.query('COMMIT');
      expect((await blocked).payment).toBeDefined();
    } finally {
      await holder.end();
    }
  });

  it("passes over a requisite whose executor's balance another transaction holds, instead of waiting for it", async () => {
    const busy = await executorWithCards(2, 'Busy');
    const idle = await executorWithCards(2, 'Idle');
    // The busy executor's cards come first in the cascade's order.
    await sql('UPDATE executors SET priority = 10 WHERE id = $1', [busy.id]);
    const b = batches();
    const holder = new pg.Client({ connectionString: service.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ledger_accounts WHERE executor_id = $1 AND kind = 'executor_available' FOR UPDATE`, [busy.id]);
      // The first goes alone (and would wait for the lock, as every create alone does): here it
      // asks for a type nobody has, so it answers at once; the other two queue and go together.
      const [nothing, ...together] = await Promise.all([
        b.creates.window(newPayment(4000, { types: ['none'] })),
        b.creates.window(newPayment(4001)),
        b.creates.window(newPayment(4002)),
      ]);
      expect(nothing!.payment).toBeUndefined();
      expect(b.sent).toEqual({ alone: 1, together: 2, again: 0 });
      const given = together.map((o) => o.payment?.id);
      const rows = await sql<{ requisite_id: string }>('SELECT requisite_id FROM payments WHERE id = ANY($1::uuid[])', [given]);
      expect(rows.map((r) => r.requisite_id).sort()).toEqual([...idle.requisites].sort());
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });

  it('a batch whose statement failed did nothing, and each of its creates answers as it would alone', async () => {
    await executorWithCards(6);
    const b = batches();
    const [taken] = await sql<{ page_token: string }>('SELECT page_token FROM payments LIMIT 1');
    const outcomes = await Promise.allSettled([
      b.creates.window(newPayment(5000)),
      b.creates.window(newPayment(5001)),
      // A page token already in use: the unique index fails the whole statement.
      b.creates.window(newPayment(5002, { pageToken: taken!.page_token })),
      b.creates.window(newPayment(5003)),
    ]);
    expect(b.sent).toEqual({ alone: 1, together: 3, again: 3 });
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const created = outcomes.flatMap((o) => (o.status === 'fulfilled' && o.value.payment ? [o.value.payment.id] : []));
    expect(created).toHaveLength(3);
    // Nothing of the failed statement stayed: one hold per payment, none for the refused create.
    const [holds] = await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_transactions t WHERE t.kind = 'payin_hold' AND t.ref_id NOT IN (SELECT id FROM payments)`,
    );
    expect(holds!.n).toBe(0);
    await expectLedgerOk(service.app);
  });

  it('a batch whose connection is lost mid-statement runs none of its creates again: each answers the lost connection, nothing was made', async () => {
    await executorWithCards(1, 'Held');
    const b = batches();
    // A transaction of one connection makes a payment with this ext_id on the one card there is,
    // and keeps it uncommitted: the batch's create of the same ext_id, on another executor's card,
    // waits on the unique index, its statement in progress.
    const holder = new pg.Pool({ connectionString: service.databaseUrl, max: 1 });
    const extId = uniqueExtId('held');
    const sent = [newPayment(8000, { types: ['none'] }), newPayment(8001), newPayment(8002, { extId }), newPayment(8003)];
    try {
      await holder.query('BEGIN');
      expect((await insertPaymentWithCascade(holder, newPayment(8100, { extId }), 'window', 2)).payment).toBeDefined();
      await executorWithCards(6, 'Free');
      const outcomes = Promise.allSettled(sent.map((p) => b.creates.window(p)));
      const pid = await waitForLockWait('payment_create_windows');
      await sql('SELECT pg_terminate_backend($1)', [pid]);
      const [alone, ...together] = await outcomes;
      expect(alone!.status).toBe('fulfilled');
      for (const o of together) {
        expect(o.status).toBe('rejected');
        expect(isDatabaseUnavailable((o as PromiseRejectedResult).reason)).toBe(true);
      }
      expect(b.sent).toEqual({ alone: 1, together: 3, again: 0 });
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    // The holder rolled back, the batch was cut: none of these payments, nor a hold for them.
    expect(await sql('SELECT 1 FROM payments WHERE ext_id = ANY($1::text[])', [sent.map((p) => p.extId)])).toHaveLength(0);
    await expectLedgerOk(service.app);
  });

  it('a create queued behind a statement that does not end gives up as a wait for a connection does (503), not never', async () => {
    await executorWithCards(2);
    // The statement in progress counts until it ends: the queue does not drain, as when a stuck
    // database holds every statement and the creates arrive faster than slowMs lets them go.
    const b = batches();
    const holder = await holdCreationLock('7000.00');
    try {
      // Alone, the first waits for the lock; the second queues behind it.
      const stuck = b.creates.window(newPayment(7000));
      const started = Date.now();
      const queued = await b.creates.window(newPayment(7001)).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(queued).toBeInstanceOf(DatabaseWaitTimeout);
      expect(isDatabaseUnavailable(queued)).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(CONNECTION_TIMEOUT_MS - 50);
      await holder.query('COMMIT');
      expect((await stuck).payment).toBeDefined();
    } finally {
      await holder.end();
    }
  });

  it('a create waiting for a lock held elsewhere holds the queue up for slowMs, not until the lock is let go', async () => {
    await executorWithCards(3);
    const b = batches(CREATE_BATCH_SLOW_MS);
    const holder = await holdCreationLock('7100.00');
    try {
      const stuck = b.creates.window(newPayment(7100));
      const started = Date.now();
      const next = await b.creates.window(newPayment(7101));
      expect(next.payment).toBeDefined();
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(CREATE_BATCH_SLOW_MS - 20);
      expect(waited).toBeLessThan(CONNECTION_TIMEOUT_MS);
      expect(b.sent).toEqual({ alone: 2, together: 0, again: 0 });
      await holder.query('COMMIT');
      expect((await stuck).payment).toBeDefined();
    } finally {
      await holder.end();
    }
    await expectLedgerOk(service.app);
  });

  it('the service batches concurrent creates: 60 at once each answered as alone, none twice on one requisite and amount', async () => {
    await executorWithCards(20);
    await executorWithCards(20);
    const before = await createsSent(service);
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId('http'), amount: 6000 + i, method: 'CARD' }),
      ),
    );
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const after = await createsSent(service);
    expect(after.together - before.together).toBeGreaterThan(0);
    expect(after.alone + after.together + after.again - before.alone - before.together - before.again).toBeGreaterThanOrEqual(60);
    await expectLedgerOk(service.app);
  });
});
