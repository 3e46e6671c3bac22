/**
 * Executors' reported transfers completed together (src/incoming/notification-batches.ts;
 * notification_complete_transfers in src/db/functions/payment_complete.sql; issue 38 item 1): the
 * reports that queue behind a statement in progress go as one statement and one transaction, and
 * each comes out as it would alone — completed exactly once with its notification and audit row,
 * never waiting for a lock inside a batch, the one that cannot be done there (no PENDING payment,
 * DEPOSIT_SHORT, a row locked elsewhere) run again alone without failing the others.
 */
import { Decimal } from 'decimal.js';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { DomainError } from '../src/errors.js';
import { NotificationBatches } from '../src/incoming/notification-batches.js';
import { type NotificationInput, type NotificationResult, receiveNotification } from '../src/incoming/notifications.service.js';
import { payinSettlement } from '../src/ledger/credit.js';
import type { CreateSending } from '../src/observability/metrics.js';
import {
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  expectLedgerOk,
  type MerchantCredentials,
  setRate,
  sqlOf,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

const RATE = '100';
const PAYIN_RATE = '2';

let service: TestService;
let merchant: MerchantCredentials;
let nextAmount = 1000;

const sql = sqlOf(() => service);

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', Number(RATE));
  merchant = await createMerchant(service.app, { payin_rate: Number(PAYIN_RATE) });
});
afterAll(async () => service?.close());

// Every test lays out its own pool: the requisites of earlier tests are switched off.
beforeEach(async () => {
  await sql('UPDATE requisites SET is_active = false');
});

type Executor = { id: string; token: string; name: string; requisites: string[] };
type Pending = { id: string; requisiteId: string; amount: string; executor: Executor };

/** An executor with `cards` fresh requisites. */
async function executorWithCards(cards: number, name: string, deposit?: number): Promise<Executor> {
  const executor = await createExecutor(service.app, name, deposit === undefined ? {} : { deposit });
  const requisites: string[] = [];
  for (let i = 0; i < cards; i++) requisites.push((await createRequisite(service.app, executor.id, { max_amount: null })).id);
  return { ...executor, name, requisites };
}

/** `count` PENDING payments of amounts never used before, handed out over the active requisites. */
async function pendingPayments(count: number, executors: Executor[]): Promise<Pending[]> {
  const payments: Pending[] = [];
  for (let i = 0; i < count; i++) {
    const { status, body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId('nb'), amount: nextAmount++ });
    expect(status, JSON.stringify(body)).toBe(200);
    const [row] = await sql<{ requisite_id: string; payer_amount: string }>('SELECT requisite_id, payer_amount::text FROM payments WHERE id = $1', [body.id]);
    const executor = executors.find((e) => e.requisites.includes(row!.requisite_id))!;
    payments.push({ id: body.id, requisiteId: row!.requisite_id, amount: row!.payer_amount, executor });
  }
  return payments;
}

/**
 * Batches of at most 16, one statement in progress at a time, counting how each report went, and
 * the service's context with them. A statement counts as in progress until it ends unless
 * `slowMs` is given.
 */
function batches(slowMs = 60_000): { ctx: AppContext; sent: Record<CreateSending, number> } {
  const sent: Record<CreateSending, number> = { alone: 0, together: 0, again: 0 };
  const metrics: AppContext['metrics'] = Object.create(service.ctx.metrics);
  metrics.completionsSent = (how: CreateSending, n: number) => {
    sent[how] += n;
  };
  const reportedTransfers = new NotificationBatches(service.ctx.db, { config: service.ctx.config, metrics }, service.ctx.log, {
    maxItems: 16,
    maxInFlight: 1,
    slowMs,
  });
  return { ctx: { ...service.ctx, metrics, reportedTransfers }, sent };
}

/** The executor's report of `payment`'s transfer, as the executor API takes it (with a time: repeats of it are one report). */
function report(ctx: AppContext, payment: Pending, input: Partial<NotificationInput> = {}): Promise<NotificationResult> {
  const { executor } = payment;
  return receiveNotification(
    ctx,
    { id: executor.id, name: executor.name, is_active: true, created_at: new Date() },
    { requisite_id: payment.requisiteId, amount: Number(payment.amount), ...input },
    { name: `executor:${executor.name}`, userId: null, ip: '192.0.2.7' },
  );
}

/** The terminal's credited balance. */
async function terminalBalance(): Promise<Decimal> {
  const [row] = await sql<{ balance: string }>(`SELECT balance::text FROM ledger_accounts WHERE kind = 'terminal_available' AND terminal_id = $1`, [
    merchant.terminalId,
  ]);
  return new Decimal(row?.balance ?? 0);
}

/** What each payment left: its status, its pay-in postings, its matched notifications and their audit rows. */
async function leftBy(paymentIds: string[]) {
  return sql<{ id: string; status: string; payins: number; matched: number; audited: number; actors: string[] }>(
    `SELECT p.id, p.status,
            (SELECT count(*)::int FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id) AS payins,
            (SELECT count(*)::int FROM notifications n WHERE n.payment_id = p.id AND n.status = 'matched') AS matched,
            (SELECT count(*)::int FROM audit_log a JOIN notifications n ON a.object_type = 'notification' AND a.object_id = n.id::text
              WHERE n.payment_id = p.id AND a.action = 'notification.receive') AS audited,
            (SELECT coalesce(array_agg(DISTINCT a.actor), '{}') FROM audit_log a JOIN notifications n ON a.object_type = 'notification' AND a.object_id = n.id::text
              WHERE n.payment_id = p.id) AS actors
       FROM payments p WHERE p.id = ANY($1::uuid[]) ORDER BY p.created_at`,
    [paymentIds],
  );
}

/** What the terminal gets for `payments` (decision 11's net; the executors' reward is nil here). */
function credits(payments: Pending[]): Decimal {
  return payments.reduce((sum, p) => sum.plus(payinSettlement(p.amount, RATE, PAYIN_RATE, '0').net), new Decimal(0));
}

/** A transaction on a connection of its own holding `paymentIds`' rows, as a completion in progress does; COMMIT lets them go. */
async function holdPayments(paymentIds: string[]): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: service.databaseUrl });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT 1 FROM payments WHERE id = ANY($1::uuid[]) FOR UPDATE', [paymentIds]);
  return holder;
}

/**
 * `blocker`'s report sent first, alone, and waiting for its payment's row, held here: every report
 * sent after it queues behind it and goes in one batch once `release` lets the row go. (Reports
 * sent at once reach the queue in whichever order their requisite's lookup ends.)
 */
async function queueBehind(ctx: AppContext, blocker: Pending): Promise<{ answer: Promise<NotificationResult>; release: () => Promise<void> }> {
  const holder = await holdPayments([blocker.id]);
  const answer = report(ctx, blocker);
  await waitingFor(holder);
  return {
    answer,
    release: async () => {
      await holder.query('COMMIT');
      await holder.end();
    },
  };
}

/** Until `count` reports wait in `ctx`'s queue (each reads its executor's requisite before it queues). */
async function queued(ctx: AppContext, count: number): Promise<void> {
  await until(
    async () => ((ctx.reportedTransfers as unknown as { waiting: unknown[] }).waiting.length >= count ? true : undefined),
    5_000,
    5,
    `${count} reports queued`,
  );
}

/** Until a backend waits for a lock `holder` holds. */
async function waitingFor(holder: pg.Client): Promise<void> {
  const [{ pid }] = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
  await until(
    async () =>
      (await sql<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity p WHERE $1 = ANY(pg_blocking_pids(p.pid))', [pid]))[0]!.n > 0
        ? true
        : undefined,
    5_000,
    10,
    'a report waiting for the held payment',
  );
}

/** Settles to the answer or the error, so that one refusal does not hide the others' answers. */
const settled = (answer: Promise<NotificationResult>) =>
  answer.then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );

describe('reported transfers taken together', () => {
  it('a burst of 40 over many payments: each completed once in batches, with its notification and audit row; balances exact; the ledger balances', async () => {
    const executors = [await executorWithCards(12, 'Burst one'), await executorWithCards(12, 'Burst two')];
    const payments = await pendingPayments(40, executors);
    const before = await terminalBalance();
    const { ctx, sent } = batches();
    // Half carry a time (repeats of them are one report), half are bare; all at once.
    const answers = await Promise.all(payments.map((p, i) => report(ctx, p, i % 2 ? { received_at: new Date(Date.now() - i).toISOString() } : {})));

    // The first goes alone; the 39 others queue behind it and go in batches of 16 at most.
    expect(sent).toEqual({ alone: 1, together: 39, again: 0 });
    answers.forEach((answer, i) => {
      expect(answer).toMatchObject({ matched: true, status: 'matched', duplicate: false, payment_id: payments[i]!.id });
    });
    expect(new Set(answers.map((a) => a.notification_id)).size).toBe(40);
    const left = await leftBy(payments.map((p) => p.id));
    expect(left).toHaveLength(40);
    for (const row of left) {
      const payment = payments.find((p) => p.id === row.id)!;
      expect(row).toEqual({ id: payment.id, status: 'COMPLETED', payins: 1, matched: 1, audited: 1, actors: [`executor:${payment.executor.name}`] });
    }
    expect((await terminalBalance()).minus(before).toFixed()).toBe(credits(payments).toFixed());
    // Every hold settled: nothing is frozen on either executor any more.
    const frozen = await sql<{ balance: string }>(
      `SELECT balance::text FROM ledger_accounts WHERE kind = 'executor_frozen' AND executor_id = ANY($1::uuid[]) ORDER BY executor_id`,
      [executors.map((e) => e.id)],
    );
    expect(frozen.map((f) => Number(f.balance))).toEqual([0, 0]);
    await expectLedgerOk(service.app);
  });

  it('one payment reported twice in one batch completes once (the other is unmatched); a repeat of one report in a batch answers as the first', async () => {
    const executor = await executorWithCards(4, 'Twice');
    const [first, twice, repeated] = await pendingPayments(3, [executor]);
    const before = await terminalBalance();
    const { ctx, sent } = batches();
    const blocker = await queueBehind(ctx, first!);
    const at = new Date().toISOString();
    const answers = Promise.all([
      report(ctx, twice!),
      report(ctx, twice!),
      report(ctx, repeated!, { received_at: at }),
      report(ctx, repeated!, { received_at: at }),
    ]);
    await queued(ctx, 4);
    await blocker.release();
    const [a, b, c, d] = await answers;
    // One alone, four together; the second report of `twice` found no PENDING payment and went the whole way alone.
    expect(sent).toEqual({ alone: 1, together: 4, again: 1 });
    expect(await blocker.answer).toMatchObject({ matched: true, payment_id: first!.id });
    expect([a!.status, b!.status].sort()).toEqual(['matched', 'unmatched']);
    expect([a!, b!].find((x) => x.matched)!.payment_id).toBe(twice!.id);
    expect([c!.duplicate, d!.duplicate].sort()).toEqual([false, true]);
    for (const x of [c!, d!]) expect(x).toMatchObject({ matched: true, payment_id: repeated!.id, notification_id: c!.notification_id });
    for (const row of await leftBy([first!.id, twice!.id, repeated!.id])) expect(row).toMatchObject({ status: 'COMPLETED', payins: 1, matched: 1, audited: 1 });
    const [unmatched] = await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM notifications WHERE requisite_id = $1 AND amount = $2 AND status = 'unmatched'`,
      [twice!.requisiteId, twice!.amount],
    );
    expect(unmatched!.n).toBe(1);
    expect((await terminalBalance()).minus(before).toFixed()).toBe(credits([first!, twice!, repeated!]).toFixed());
    await expectLedgerOk(service.app);
  });

  it('one payment reported in two batches at once (two instances) completes once', async () => {
    const executor = await executorWithCards(8, 'Two batches');
    const [blockerOne, blockerTwo, shared, ...others] = await pendingPayments(9, [executor]);
    const before = await terminalBalance();
    const one = batches();
    const two = batches();
    // Each instance's first report waits for a lock held here, alone; the rest queue behind it and
    // go as one batch in each instance, both at once, as soon as the locks are let go.
    const holder = await holdPayments([blockerOne!.id, blockerTwo!.id]);
    const blocked = [report(one.ctx, blockerOne!), report(two.ctx, blockerTwo!)];
    await until(
      async () =>
        (await sql<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity p WHERE cardinality(pg_blocking_pids(p.pid)) > 0'))[0]!.n >= 2
          ? true
          : undefined,
      5_000,
      10,
      'both blockers waiting',
    );
    const answersOne = Promise.all([shared!, ...others.slice(0, 3)].map((p) => report(one.ctx, p)));
    const answersTwo = Promise.all([shared!, ...others.slice(3)].map((p) => report(two.ctx, p)));
    await queued(one.ctx, 4);
    await queued(two.ctx, 4);
    await holder.query('COMMIT');
    await holder.end();
    const [a, b] = await Promise.all([answersOne, answersTwo]);
    for (const answer of await Promise.all(blocked)) expect(answer.status).toBe('matched');
    expect(one.sent).toMatchObject({ alone: 1, together: 4 });
    expect(two.sent).toMatchObject({ alone: 1, together: 4 });
    expect([a[0]!.status, b[0]!.status].sort()).toEqual(['matched', 'unmatched']);
    for (const answer of [...a.slice(1), ...b.slice(1)]) expect(answer.status).toBe('matched');
    for (const row of await leftBy([blockerOne!.id, blockerTwo!.id, shared!.id, ...others.map((p) => p.id)])) {
      expect(row).toMatchObject({ status: 'COMPLETED', payins: 1, matched: 1, audited: 1 });
    }
    expect((await terminalBalance()).minus(before).toFixed()).toBe(credits([blockerOne!, blockerTwo!, shared!, ...others]).toFixed());
    await expectLedgerOk(service.app);
  });

  it('a batch waits for no lock: a report whose payment is locked elsewhere comes back busy and waits alone, the others complete meanwhile', async () => {
    const executor = await executorWithCards(4, 'Busy');
    const [first, locked, free, other] = await pendingPayments(4, [executor]);
    const { ctx, sent } = batches();
    const blocker = await queueBehind(ctx, first!);
    const holder = await holdPayments([locked!.id]);
    let lockedSettled = false;
    const lockedAnswer = report(ctx, locked!).finally(() => {
      lockedSettled = true;
    });
    const answers = Promise.all([report(ctx, free!), report(ctx, other!)]);
    await queued(ctx, 3);
    await blocker.release();
    expect((await answers).map((a) => a.status)).toEqual(['matched', 'matched']);
    // The locked one came back busy and now waits alone; the batch committed without it.
    expect(sent).toEqual({ alone: 1, together: 3, again: 1 });
    await waitingFor(holder);
    expect(lockedSettled).toBe(false);
    await holder.query('COMMIT');
    await holder.end();
    expect(await lockedAnswer).toMatchObject({ status: 'matched', payment_id: locked!.id });
    for (const row of await leftBy([first!.id, locked!.id, free!.id, other!.id]))
      expect(row).toMatchObject({ status: 'COMPLETED', payins: 1, matched: 1, audited: 1 });
    await expectLedgerOk(service.app);
  });

  it('an item that fails inside a batch (DEPOSIT_SHORT) leaves nothing and fails none of the others', async () => {
    // An executor whose deposit is exactly one payment's hold, and that payment's hold taken off
    // its row (as if released): its completion must come from an available balance of 0.
    const poor = await executorWithCards(1, 'Short', nextAmount / Number(RATE));
    const [short] = await pendingPayments(1, [poor]);
    const [{ hold }] = (await sql<{ hold: string }>('SELECT hold::text FROM payments WHERE id = $1', [short!.id])) as [{ hold: string }];
    expect(Number(hold)).toBe(Number(short!.amount) / Number(RATE));
    const rich = await executorWithCards(3, 'Covered');
    const [first, ...others] = await pendingPayments(3, [rich]);
    const before = await terminalBalance();
    await sql('UPDATE payments SET hold = NULL WHERE id = $1', [short!.id]);
    const { ctx, sent } = batches();
    const blocker = await queueBehind(ctx, first!);
    const answers = Promise.all([report(ctx, others[0]!), report(ctx, short!), report(ctx, others[1]!)].map(settled));
    await queued(ctx, 3);
    await blocker.release();
    const [x, refused, y] = await answers;

    expect(sent).toEqual({ alone: 1, together: 3, again: 1 });
    expect(refused!.error).toBeInstanceOf(DomainError);
    expect((refused!.error as DomainError).key).toBe('DEPOSIT_SHORT');
    for (const answer of [await blocker.answer, x!.result, y!.result]) expect(answer).toMatchObject({ status: 'matched' });
    const [row] = await leftBy([short!.id]);
    expect(row).toMatchObject({ status: 'PENDING', payins: 0, matched: 0, audited: 0 });
    const [stored] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM notifications WHERE requisite_id = $1', [short!.requisiteId]);
    expect(stored!.n).toBe(0);
    for (const left of await leftBy([first!.id, ...others.map((p) => p.id)]))
      expect(left).toMatchObject({ status: 'COMPLETED', payins: 1, matched: 1, audited: 1 });
    expect((await terminalBalance()).minus(before).toFixed()).toBe(credits([first!, ...others]).toFixed());

    // Its hold back, it completes as any other.
    await sql('UPDATE payments SET hold = $2 WHERE id = $1', [short!.id, hold]);
    expect(await report(batches().ctx, short!)).toMatchObject({ status: 'matched', payment_id: short!.id });
    await expectLedgerOk(service.app);
  });
});

describe('payment_complete completes, and only that (issue 38: the transition written in it)', () => {
  it('its written-out change leaves the payment and answers as payment_transition does for the same completion', async () => {
    const executor = await executorWithCards(1, 'Same as the transition');
    const [payment] = await pendingPayments(1, [executor]);
    const columns = `status, cancel_reason, cancel_note, completed_at IS NOT NULL AS completed, received_amount::text AS received_amount`;
    const answer = `id, merchant_id, terminal_id, "from", "to", executor_id, hold::text AS hold, requisite_id, method, cancel_reason, is_test`;
    // Each in a transaction rolled back, on the same PENDING payment with a cancel reason to clear.
    const run = async (call: string) => {
      const client = await service.ctx.db.connect();
      try {
        await client.query('BEGIN');
        await client.query(`UPDATE payments SET cancel_reason = 'EXPIRED', cancel_note = 'late' WHERE id = $1`, [payment!.id]);
        const answered = (await client.query(`SELECT ${answer} FROM ${call}`, [payment!.id])).rows[0];
        const row = (await client.query(`SELECT ${columns} FROM payments WHERE id = $1`, [payment!.id])).rows[0];
        return { answered, row };
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    };
    const transition = await run(`payment_transition($1, ARRAY['PENDING'], 'COMPLETED', NULL, NULL, NULL)`);
    const complete = await run(`payment_complete($1, ARRAY['PENDING'], 'COMPLETED', NULL, NULL, NULL, NULL, 'http://kassir.test/pay')`);
    expect(transition.row).toMatchObject({ status: 'COMPLETED', cancel_reason: null, cancel_note: null, completed: true });
    expect(complete).toEqual(transition);
  });

  it('refuses any other status and changes nothing; a completion writes the payment, its pay-in posting’s legs, and no event without a notify_url', async () => {
    const executor = await executorWithCards(1, 'Only completes');
    const [payment] = await pendingPayments(1, [executor]);
    for (const to of ['CANCELLED', 'PROCESSING', 'DISPUTE']) {
      await expect(
        sql(`SELECT * FROM payment_complete($1, ARRAY['PENDING'], $2, NULL, NULL, NULL, NULL, 'http://kassir.test/pay')`, [payment!.id, to]),
      ).rejects.toThrow(`payment_complete: ${to} is no completion`);
    }
    const [before] = await sql<{ status: string; cancel_reason: string | null }>('SELECT status, cancel_reason FROM payments WHERE id = $1', [payment!.id]);
    expect(before).toEqual({ status: 'PENDING', cancel_reason: null });

    const [done] = await sql<{ from: string; to: string; short_needed: string | null }>(
      `SELECT "from", "to", short_needed FROM payment_complete($1, ARRAY['PENDING', 'PROCESSING'], 'COMPLETED', NULL, NULL, NULL, NULL, 'http://kassir.test/pay')`,
      [payment!.id],
    );
    expect(done).toEqual({ from: 'PENDING', to: 'COMPLETED', short_needed: null });
    const [row] = await sql<{ status: string; completed: boolean; received: string; amount: string }>(
      'SELECT status, completed_at IS NOT NULL AS completed, received_amount::text AS received, amount::text FROM payments WHERE id = $1',
      [payment!.id],
    );
    expect(row).toEqual({ status: 'COMPLETED', completed: true, received: row!.amount, amount: row!.amount });
    // The pay-in's legs, in their order: the hold given up, the terminal's net (at COMMIT), the platform's rest.
    const legs = await sql<{ kind: string; amount: string; at_commit: boolean }>(
      `SELECT a.kind, e.amount::text, e.applied_at_commit AS at_commit
         FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.kind = 'payin' AND t.ref_id = $1 ORDER BY e.id`,
      [payment!.id],
    );
    const s = payinSettlement(row!.amount, RATE, PAYIN_RATE, '0');
    expect(legs).toEqual([
      { kind: 'executor_frozen', amount: s.gross.negated().toFixed(6), at_commit: false },
      { kind: 'terminal_available', amount: s.net.toFixed(6), at_commit: true },
      { kind: 'system_fee_revenue', amount: s.revenue.toFixed(6), at_commit: false },
    ]);
    const events = await sql<{ event: string }>(`SELECT event FROM webhook_events WHERE resource_id = $1`, [payment!.id]);
    expect(events).toEqual([]); // this payment has no notify_url
    await expectLedgerOk(service.app);
  });
});
