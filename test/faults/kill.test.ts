import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_LEASE_SECONDS } from '../../src/http/idempotency.js';
import { type FakeTronNode, randomTronAddress, startFakeTronNode, TEST_TRON_KEY } from '../fakes/tron-node.js';
import {
  type Answer,
  baseEnv,
  Client,
  cleanUp,
  Database,
  definitive,
  type Instance,
  isRefusedForNow,
  printFigures,
  Receiver,
  sleep,
  startInstance,
  waitFor,
  workDir,
} from './harness.js';
import { cardNumber, openShop, payinCredit, payoutReserve, requisiteOf, rubles, type Shop, withdrawalHold } from './shop.js';

/**
 * Issue 15, faults 1: kill -9 of a service instance in the middle of a load of payment creates,
 * executors' notifications completing them, payouts (executor take/complete, operator
 * complete/fail), withdrawals (Tron, against the fake node) and transfers; then a new instance on
 * the same database. Every acknowledged request must be there and nothing doubled; what was in
 * flight at the kill happened wholly or not at all, and a retry with its Idempotency-Key (or, for
 * executors' and operators' calls, the same call again) is safe; balances equal exactly what the
 * client's own book of acknowledged operations says; the ledger check passes; every webhook event
 * reaches the receiver.
 */

const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
/** How long the load runs before the kill, and again on the new instance. */
const LOAD_BEFORE_KILL_MS = 8_000;
const LOAD_AFTER_RESTART_MS = 4_000;
const T1_FUNDS = '100000';
const T2_FUNDS = '5000';

/** One request the client made, as it can be sent again (the same bytes, the same Idempotency-Key). */
interface Call {
  label: string;
  send: () => Promise<Answer>;
  /** Answers in order: the first, then any retries. */
  answers: Answer[];
  /** In flight when the instance died: no answer at all, or a 5xx. */
  inFlightAtKill: boolean;
}

interface PaymentBook {
  extId: string;
  amount: string;
  create: Call;
  id?: string;
  requisiteId?: string;
  executorToken?: string;
  /** false: the service refused it (recorded with its answer). */
  created?: boolean;
  notify?: Call;
  wantsNotify: boolean;
  matched?: boolean;
}

interface PayoutBook {
  extId: string;
  amount: string;
  action: 'executor' | 'operator-complete' | 'operator-fail';
  create: Call;
  id?: string;
  created?: boolean;
  steps: Call[];
  /** The status the client's acknowledged calls put it in. */
  status?: 'pending' | 'processing' | 'completed' | 'failed';
}

interface WithdrawalBook {
  amount: string;
  address: string;
  create: Call;
  id?: string;
  created?: boolean;
}

interface TransferBook {
  from: string;
  to: string;
  amount: string;
  call: Call;
  done?: boolean;
}

let work: string;
let db: Database;
let node: FakeTronNode;
let receiver: Receiver;
let failed = true;
const instances: Instance[] = [];

beforeAll(async () => {
  work = workDir('kill');
  db = await Database.start(work);
  node = await startFakeTronNode({ autoConfirmMs: 300 });
  receiver = await new Receiver().start();
});

afterAll(async () => {
  for (const instance of instances) await instance.stop();
  await node?.close();
  await receiver?.close();
  await db?.stop();
  cleanUp(work, failed);
});

describe('kill -9 of an instance under load', () => {
  it('keeps every acknowledged request, doubles nothing and delivers every event', async () => {
    const env = {
      ...baseEnv(db),
      KASSIR_WITHDRAWAL_ADAPTER: 'tron',
      KASSIR_TRON_FULL_NODE: node.url,
      KASSIR_TRON_PRIVATE_KEY: TEST_TRON_KEY,
      KASSIR_TRON_POLL_MS: '200',
    };
    let current = await startInstance(work, 'first', env);
    instances.push(current);
    const client = new Client(() => current);
    const shop: Shop = await openShop(client, { funds: [T1_FUNDS, T2_FUNDS], executors: 1, requisitesEach: 40 });
    const [t1, t2] = shop.terminals as [Shop['terminals'][0], Shop['terminals'][0]];
    const executor = shop.executors[0]!;

    const calls: Call[] = [];
    const payments: PaymentBook[] = [];
    const payouts: PayoutBook[] = [];
    const withdrawals: WithdrawalBook[] = [];
    const transfers: TransferBook[] = [];
    const toNotify: PaymentBook[] = [];
    let killing = false;
    let seq = 0;

    const call = (label: string, send: () => Promise<Answer>): Call => {
      const made: Call = { label, send, answers: [], inFlightAtKill: false };
      calls.push(made);
      return made;
    };
    /** Requests the service refused under load (503 UNAVAILABLE, Retry-After) and were sent again after it. */
    let shed = 0;
    /**
     * Sends until the service takes it (a request shed under load is sent again after its
     * Retry-After, at most a second here: the run has a budget); undefined when the answer is not
     * definitive because the instance is dying.
     */
    const once = async (c: Call): Promise<Answer | undefined> => {
      let answer = await c.send();
      c.answers.push(answer);
      for (let attempt = 0; !killing && isRefusedForNow(answer) && attempt < 20; attempt++) {
        shed++;
        await sleep(Math.min(1000, Number(answer.headers?.get('retry-after') ?? 1) * 1000));
        answer = await c.send();
        c.answers.push(answer);
      }
      if (definitive(answer)) return answer;
      if (!killing) throw new Error(`${c.label} failed with no instance being killed: ${answer.status} ${answer.error ?? JSON.stringify(answer.body)}`);
      c.inFlightAtKill = true;
      return undefined;
    };
    /**
     * Sends again until the answer is definitive: no connection or a 5xx is retried, and so is a
     * 409 that says when to retry (an Idempotency-Key whose first request is still unanswered).
     */
    const persist = async (c: Call): Promise<Answer> => {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const answer = await c.send();
        c.answers.push(answer);
        const later = answer.status === 409 && answer.headers?.get('retry-after');
        if (definitive(answer) && !later) return answer;
        if (Date.now() > deadline)
          throw new Error(`${c.label}: no definitive answer after 120 s of retries; last ${answer.status} ${JSON.stringify(answer.body)}`);
        await sleep(later ? Math.min(2000, Number(later) * 1000) : 250);
      }
    };

    // ---- the flows; each resumes from its last unanswered step (send = once under load, persist after the restart)
    const paymentFlow = async (p: PaymentBook, send: (c: Call) => Promise<Answer | undefined>) => {
      if (p.created === undefined) {
        const answer = await send(p.create);
        if (!answer) return;
        if (answer.status === 200 || answer.status === 201) {
          p.created = true;
          p.id = answer.body.id;
          const { executor: owner, requisiteId } = requisiteOf(shop, answer.body);
          p.requisiteId = requisiteId;
          p.executorToken = owner.token;
        } else if (answer.status === 409 && answer.body.error === 'PAY_003') {
          // The first attempt committed; its answer was lost with the instance.
          const found = await persist(call(`lookup of payment ${p.extId}`, () => client.merchant(t1, 'GET', `/v1/payments/by-ext-id/${p.extId}`)));
          expect(found.status).toBe(200);
          p.created = true;
          p.id = found.body.id;
          const { executor: owner, requisiteId } = requisiteOf(shop, found.body);
          p.requisiteId = requisiteId;
          p.executorToken = owner.token;
        } else {
          throw new Error(`payment ${p.extId} refused: ${answer.status} ${JSON.stringify(answer.body)}`);
        }
        if (p.wantsNotify) toNotify.push(p);
      }
    };
    const notifyFlow = async (p: PaymentBook, send: (c: Call) => Promise<Answer | undefined>) => {
      if (!p.created || !p.wantsNotify || p.matched !== undefined) return;
      // received_at makes repeats of this notification recognisable (the executor app retrying).
      const receivedAt = new Date(Date.now() - 1000).toISOString();
      p.notify ??= call(`notification for ${p.extId}`, () =>
        client.executor(p.executorToken!, 'POST', '/notifications', { requisite_id: p.requisiteId, amount: Number(p.amount), received_at: receivedAt }),
      );
      const answer = await send(p.notify);
      if (!answer) return;
      if (answer.status !== 200) throw new Error(`notification for ${p.extId}: ${answer.status} ${JSON.stringify(answer.body)}`);
      expect(answer.body.payment_id).toBe(p.id);
      p.matched = answer.body.matched;
      expect(p.matched).toBe(true);
    };
    const payoutFlow = async (p: PayoutBook, send: (c: Call) => Promise<Answer | undefined>) => {
      if (p.created === undefined) {
        const answer = await send(p.create);
        if (!answer) return;
        if (answer.status === 200 || answer.status === 201) {
          p.id = answer.body.id;
        } else if (answer.status === 409 && answer.body.error === 'PAY_003') {
          const found = await persist(call(`lookup of payout ${p.extId}`, () => client.merchant(t1, 'GET', `/v1/payouts/by-ext-id/${p.extId}`)));
          expect(found.status).toBe(200);
          p.id = found.body.id;
        } else {
          throw new Error(`payout ${p.extId} refused: ${answer.status} ${JSON.stringify(answer.body)}`);
        }
        p.created = true;
        p.status = 'pending';
      }
      if (!p.created) return;
      // Each step is guarded by the payout's status: repeating an executed one answers CONFLICT.
      const step = async (label: string, wanted: PayoutBook['status'], from: PayoutBook['status'], make: () => Promise<Answer>) => {
        if (p.status !== from) return true;
        const c = p.steps.find((s) => s.label === label) ?? call(label, make);
        if (!p.steps.includes(c)) p.steps.push(c);
        const answer = await send(c);
        if (!answer) return false;
        if (answer.status === 200) {
          expect(answer.body.status).toBe(wanted);
          p.status = wanted;
          return true;
        }
        if (answer.status === 409 && c.answers.length > 1 && answer.body.data?.status === wanted) {
          p.status = wanted; // the first attempt did it
          return true;
        }
        throw new Error(`${label}: ${answer.status} ${JSON.stringify(answer.body)}`);
      };
      if (p.action === 'executor') {
        if (!(await step(`take ${p.extId}`, 'processing', 'pending', () => client.executor(executor.token, 'POST', `/payouts/${p.id}/take`)))) return;
        await step(`complete ${p.extId}`, 'completed', 'processing', () =>
          client.executorUpload(executor.token, `/payouts/${p.id}/complete`, 'proof', TINY_PNG),
        );
      } else if (p.action === 'operator-complete') {
        await step(`operator complete ${p.extId}`, 'completed', 'pending', () => client.admin('POST', `/payouts/${p.id}/complete`, {}));
      } else {
        await step(`operator fail ${p.extId}`, 'failed', 'pending', () => client.admin('POST', `/payouts/${p.id}/fail`, { reason: 'fault suite' }));
      }
    };
    const withdrawalFlow = async (w: WithdrawalBook, send: (c: Call) => Promise<Answer | undefined>) => {
      if (w.created !== undefined) return;
      const answer = await send(w.create);
      if (!answer) return;
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`withdrawal refused: ${answer.status} ${JSON.stringify(answer.body)}`);
      w.created = true;
      w.id = answer.body.id;
    };
    const transferFlow = async (t: TransferBook, send: (c: Call) => Promise<Answer | undefined>) => {
      if (t.done !== undefined) return;
      const answer = await send(t.call);
      if (!answer) return;
      if (answer.status !== 200) throw new Error(`transfer refused: ${answer.status} ${JSON.stringify(answer.body)}`);
      t.done = true;
    };

    // ---- the load: every merchant POST carries an Idempotency-Key of its own
    let stop = false;
    const loop = async (work: () => Promise<void>) => {
      while (!stop) await work();
    };
    const newPayment = () => {
      const extId = `kill-${++seq}-${randomUUID().slice(0, 8)}`;
      const amount = rubles(100, 5000);
      const key = randomUUID();
      const body = { ext_id: extId, amount: Number(amount), currency: 'RUB', method: 'CARD', notify_url: receiver.url };
      const p: PaymentBook = {
        extId,
        amount,
        wantsNotify: Math.random() < 0.6,
        create: call(`payment ${extId}`, () => client.merchant(t1, 'POST', '/v1/payments', body, key)),
      };
      payments.push(p);
      return p;
    };
    const actions: PayoutBook['action'][] = ['executor', 'executor', 'operator-complete', 'operator-fail'];
    const newPayout = () => {
      const extId = `kill-po-${++seq}-${randomUUID().slice(0, 8)}`;
      const amount = rubles(100, 3000);
      const key = randomUUID();
      const body = {
        ext_id: extId,
        amount: Number(amount),
        method: 'card',
        requisites: cardNumber(),
        holder_name: 'Petr P.',
        bank: 'sberbank',
        notify_url: receiver.url,
      };
      const p: PayoutBook = {
        extId,
        amount,
        action: actions[seq % actions.length]!,
        steps: [],
        create: call(`payout ${extId}`, () => client.merchant(t1, 'POST', '/v1/payouts', body, key)),
      };
      payouts.push(p);
      return p;
    };
    const newWithdrawal = () => {
      const amount = rubles(1, 6);
      const address = randomTronAddress();
      const key = randomUUID();
      const body = { terminal_id: t1.terminalId, amount: Number(amount), address };
      const w: WithdrawalBook = { amount, address, create: call(`withdrawal to ${address}`, () => client.merchant(t1, 'POST', '/v1/withdrawals', body, key)) };
      withdrawals.push(w);
      return w;
    };
    const newTransfer = () => {
      const back = transfers.length % 2 === 1;
      const [from, to] = back ? [t2, t1] : [t1, t2];
      const amount = new Decimal(rubles(1, 40)).plus(new Decimal(Math.floor(Math.random() * 10_000)).div(1e6)).toFixed(6);
      const key = randomUUID();
      const body = { from_terminal_id: from.terminalId, to_terminal_id: to.terminalId, amount: Number(amount) };
      const t: TransferBook = {
        from: from.terminalId,
        to: to.terminalId,
        amount,
        call: call(`transfer ${amount}`, () => client.merchant(from, 'POST', '/v1/transfers', body, key)),
      };
      transfers.push(t);
      return t;
    };
    const runLoad = (ms: number, beforeStop?: () => Promise<void>) => {
      stop = false;
      const loops = [
        ...[1, 2, 3].map(() => loop(() => paymentFlow(newPayment(), once))),
        ...[1, 2].map(() =>
          loop(async () => {
            const p = toNotify.shift();
            if (p) await notifyFlow(p, once);
            else await sleep(10);
          }),
        ),
        loop(() => payoutFlow(newPayout(), once)),
        loop(() => withdrawalFlow(newWithdrawal(), once)),
        loop(() => transferFlow(newTransfer(), once)),
      ];
      return (async () => {
        await sleep(ms);
        if (beforeStop) await beforeStop();
        stop = true;
        await Promise.all(loops);
      })();
    };

    // ---- load, then kill -9 in its middle
    const loadStarted = Date.now();
    await runLoad(LOAD_BEFORE_KILL_MS, async () => {
      killing = true;
      await current.kill9();
    });
    const killedAfterMs = Date.now() - loadStarted;
    const inFlight = calls.filter((c) => c.inFlightAtKill);

    // ---- what the database holds of the calls in flight, before anything is retried: wholly or not at all
    const happened = await inFlightOutcomes(db, { payments, payouts, withdrawals, transfers });

    // ---- a new instance on the same database; every unanswered call is sent again
    killing = false;
    const restartStarted = Date.now();
    current = await startInstance(work, 'second', env);
    instances.push(current);
    const restartMs = Date.now() - restartStarted;
    const retriesStarted = Date.now();
    await Promise.all([
      ...payments.map((p) => paymentFlow(p, persist)),
      ...payouts.map((p) => payoutFlow(p, persist)),
      ...withdrawals.map((w) => withdrawalFlow(w, persist)),
      ...transfers.map((t) => transferFlow(t, persist)),
    ]);
    // Payments created by a retry and meant to be notified, and notifications cut by the kill.
    await Promise.all(payments.map((p) => notifyFlow(p, persist)));
    toNotify.length = 0;
    const retriesMs = Date.now() - retriesStarted;

    // ---- more load on the new instance: it serves as before
    await runLoad(LOAD_AFTER_RESTART_MS);
    await Promise.all(payments.map((p) => notifyFlow(p, persist)));
    toNotify.length = 0;

    // ---- settle: withdrawals sent and confirmed on the (fake) chain, every webhook event delivered
    await waitFor(
      'every withdrawal completed on chain',
      async () => {
        const [row] = await db.query<{ open: number }>(`SELECT (count(*) FILTER (WHERE status <> 'completed'))::int AS open FROM withdrawals`);
        return row!.open === 0;
      },
      90_000,
    );
    const deliveryWaitStarted = Date.now();
    await waitFor(
      'every webhook event delivered',
      async () => {
        const [row] = await db.query<{ pending: number }>(`SELECT (count(*) FILTER (WHERE status <> 'delivered'))::int AS pending FROM webhook_events`);
        return row!.pending === 0;
      },
      180_000,
      1000,
    );
    const deliveryWaitMs = Date.now() - deliveryWaitStarted;

    // ---- the checks
    const ok = (a: Answer) => a.status >= 200 && a.status < 300;
    const acknowledged = calls.filter((c) => !c.inFlightAtKill && c.answers.some(ok)).length;
    const replayed = inFlight.filter((c) => c.answers.some((a) => a.headers?.get('idempotent-replayed') === 'true')).length;
    const lost = await lostOperations(db, t1.merchantId, { payments, payouts, withdrawals, transfers });
    const doubled = await doubledOperations(db, node);
    const halfWritten = await halfWrites(db);
    const ledger = await client.adminOk('GET', '/ledger/check');

    // Balances from the client's own book, with decimal.js.
    const expected = new Map<string, { available: Decimal; frozen: Decimal }>([
      [t1.terminalId, { available: new Decimal(T1_FUNDS), frozen: new Decimal(0) }],
      [t2.terminalId, { available: new Decimal(T2_FUNDS), frozen: new Decimal(0) }],
    ]);
    const t1Book = expected.get(t1.terminalId)!;
    for (const p of payments) if (p.matched) t1Book.available = t1Book.available.plus(payinCredit(p.amount));
    for (const p of payouts) {
      if (!p.created) continue;
      const reserve = payoutReserve(p.amount);
      t1Book.available = t1Book.available.minus(reserve);
      if (p.status === 'failed') t1Book.available = t1Book.available.plus(reserve);
      else if (p.status !== 'completed') t1Book.frozen = t1Book.frozen.plus(reserve);
    }
    for (const w of withdrawals) if (w.created) t1Book.available = t1Book.available.minus(withdrawalHold(w.amount));
    for (const t of transfers) {
      if (!t.done) continue;
      expected.get(t.from)!.available = expected.get(t.from)!.available.minus(t.amount);
      expected.get(t.to)!.available = expected.get(t.to)!.available.plus(t.amount);
    }
    const balances = await db.query<{ terminal_id: string; kind: string; balance: string }>(
      `SELECT terminal_id, kind, balance::text FROM ledger_accounts WHERE terminal_id = ANY($1::uuid[])`,
      [[t1.terminalId, t2.terminalId]],
    );
    const balanceProblems: string[] = [];
    for (const row of balances) {
      const book = expected.get(row.terminal_id)!;
      const want = row.kind === 'terminal_available' ? book.available : book.frozen;
      if (!want.eq(row.balance))
        balanceProblems.push(`${row.terminal_id === t1.terminalId ? 'T1' : 'T2'} ${row.kind}: database ${row.balance}, book ${want.toFixed(6)}`);
    }

    const events = await db.query<{ id: string }>('SELECT id FROM webhook_events');
    const received = receiver.acknowledged();
    const undelivered = events.filter((e) => !received.has(e.id)).length;

    const byKind = (prefix: string) => calls.filter((c) => c.label.startsWith(prefix)).length;
    printFigures(
      'kill -9',
      `acknowledged ${acknowledged} (+${inFlight.length} in flight at the kill, answered on retry), lost ${lost.length}, doubled ${doubled.length}, half-written ${halfWritten.length}, ` +
        `delivered ${events.length - undelivered}/${events.length} events, ledger ${ledger.ok ? 'ok' : 'NOT ok'}, balances ${balanceProblems.length === 0 ? 'exact' : 'DIFFER'}`,
      {
        'shed under load': `${shed} refusals (503 UNAVAILABLE) sent again after Retry-After`,
        'requests sent': `${calls.length} (payments ${byKind('payment ')}, notifications ${byKind('notification')}, payouts ${byKind('payout ')} + ${byKind('take') + byKind('complete') + byKind('operator')} steps, withdrawals ${byKind('withdrawal')}, transfers ${byKind('transfer')})`,
        'killed after': `${(killedAfterMs / 1000).toFixed(1)} s of load; new instance healthy in ${(restartMs / 1000).toFixed(1)} s`,
        'in flight at the kill': `${inFlight.length}: ${happened.done} had happened wholly, ${happened.notDone} not at all (${happened.detail})`,
        'their retries':
          `all answered within ${(retriesMs / 1000).toFixed(1)} s (an abandoned Idempotency-Key is taken over after its ${CLAIM_LEASE_SECONDS} s lease): ` +
          `${inFlight.filter((c) => ok(c.answers.at(-1)!)).length} 2xx (${replayed} replayed from the stored answer), ` +
          `${inFlight.filter((c) => !ok(c.answers.at(-1)!)).length} other (${[...new Set(inFlight.filter((c) => !ok(c.answers.at(-1)!)).map((c) => `${c.answers.at(-1)!.status} ${c.answers.at(-1)!.body?.error ?? ''}`.trim()))].join(', ') || 'none'})`,
        payments: `${payments.filter((p) => p.created).length} created, ${payments.filter((p) => p.matched).length} completed by notifications`,
        payouts: `${payouts.filter((p) => p.status === 'completed').length} completed, ${payouts.filter((p) => p.status === 'failed').length} failed, ${payouts.filter((p) => p.created && p.status !== 'completed' && p.status !== 'failed').length} open`,
        withdrawals: `${withdrawals.filter((w) => w.created).length} created, ${node.transfers.length} token transfers on chain`,
        transfers: `${transfers.filter((t) => t.done).length} done`,
        webhooks: `${receiver.deliveries.length} requests received for ${events.length} events (${receiver.deliveries.length - received.size} again after the kill: at least once); all delivered ${(deliveryWaitMs / 1000).toFixed(0)} s after the last load`,
        ...(lost.length ? { lost: lost.slice(0, 10).join('; ') } : {}),
        ...(doubled.length ? { doubled: doubled.slice(0, 10).join('; ') } : {}),
        ...(halfWritten.length ? { 'half-written': halfWritten.slice(0, 10).join('; ') } : {}),
        ...(balanceProblems.length ? { balances: balanceProblems.join('; ') } : {}),
        ...(ledger.ok ? {} : { ledger: JSON.stringify(ledger.problems).slice(0, 500) }),
      },
    );

    expect(inFlight.length).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(doubled).toEqual([]);
    expect(halfWritten).toEqual([]);
    expect(balanceProblems).toEqual([]);
    expect(ledger).toEqual({ ok: true, problems: [] });
    expect(undelivered).toBe(0);
    failed = false;
  }, 600_000);
});

/** For the calls in flight at the kill: did each happen (as the database says), or not? */
async function inFlightOutcomes(
  db: Database,
  book: { payments: PaymentBook[]; payouts: PayoutBook[]; withdrawals: WithdrawalBook[]; transfers: TransferBook[] },
): Promise<{ done: number; notDone: number; detail: string }> {
  let done = 0;
  let notDone = 0;
  const kinds = new Map<string, [number, number]>();
  const count = (kind: string, did: boolean) => {
    if (did) done++;
    else notDone++;
    const entry = kinds.get(kind) ?? [0, 0];
    entry[did ? 0 : 1]++;
    kinds.set(kind, entry);
  };
  const client = await db.client();
  try {
    for (const p of book.payments) {
      if (p.create.inFlightAtKill) count('payment', (await client.query('SELECT 1 FROM payments WHERE ext_id = $1', [p.extId])).rowCount === 1);
      if (p.notify?.inFlightAtKill)
        count('notification', (await client.query(`SELECT 1 FROM payments WHERE id = $1 AND status = 'COMPLETED'`, [p.id])).rowCount === 1);
    }
    for (const p of book.payouts) {
      if (p.create.inFlightAtKill) count('payout', (await client.query('SELECT 1 FROM payouts WHERE ext_id = $1', [p.extId])).rowCount === 1);
      for (const step of p.steps) {
        if (!step.inFlightAtKill) continue;
        const wanted = step.label.startsWith('take') ? 'processing' : step.label.startsWith('operator fail') ? 'failed' : 'completed';
        count(
          step.label.split(' ').slice(0, -1).join(' '),
          (await client.query('SELECT 1 FROM payouts WHERE id = $1 AND status = $2', [p.id, wanted])).rowCount === 1,
        );
      }
    }
    for (const w of book.withdrawals) {
      if (w.create.inFlightAtKill) count('withdrawal', (await client.query('SELECT 1 FROM withdrawals WHERE address = $1', [w.address])).rowCount === 1);
    }
    for (const t of book.transfers) {
      if (t.call.inFlightAtKill) {
        count('transfer', (await client.query('SELECT 1 FROM transfers WHERE from_terminal_id = $1 AND amount = $2', [t.from, t.amount])).rowCount === 1);
      }
    }
  } finally {
    await client.end();
  }
  const detail = [...kinds].map(([kind, [yes, no]]) => `${kind} ${yes}/${yes + no}`).join(', ');
  return { done, notDone, detail: detail || 'none' };
}

/** Acknowledged operations the database does not hold as acknowledged. */
async function lostOperations(
  db: Database,
  merchantId: string,
  book: { payments: PaymentBook[]; payouts: PayoutBook[]; withdrawals: WithdrawalBook[]; transfers: TransferBook[] },
): Promise<string[]> {
  const lost: string[] = [];
  const payments = new Map(
    (await db.query<{ ext_id: string; id: string; status: string }>('SELECT ext_id, id, status FROM payments WHERE merchant_id = $1', [merchantId])).map(
      (r) => [r.ext_id, r],
    ),
  );
  for (const p of book.payments) {
    if (!p.created) continue;
    const row = payments.get(p.extId);
    if (!row || row.id !== p.id) lost.push(`payment ${p.extId} missing`);
    else if (p.matched && row.status !== 'COMPLETED') lost.push(`payment ${p.extId} acknowledged COMPLETED but is ${row.status}`);
  }
  const known = new Set(book.payments.filter((p) => p.created).map((p) => p.extId));
  for (const extId of payments.keys()) if (!known.has(extId)) lost.push(`payment ${extId} exists but the client never learnt of it`);
  const payouts = new Map(
    (await db.query<{ ext_id: string; id: string; status: string }>('SELECT ext_id, id, status FROM payouts WHERE merchant_id = $1', [merchantId])).map((r) => [
      r.ext_id,
      r,
    ]),
  );
  for (const p of book.payouts) {
    if (!p.created) continue;
    const row = payouts.get(p.extId);
    if (!row || row.id !== p.id) lost.push(`payout ${p.extId} missing`);
    else if (row.status !== p.status) lost.push(`payout ${p.extId} acknowledged ${p.status} but is ${row.status}`);
  }
  const withdrawals = new Map(
    (await db.query<{ address: string; id: string }>('SELECT address, id FROM withdrawals WHERE merchant_id = $1', [merchantId])).map((r) => [r.address, r]),
  );
  for (const w of book.withdrawals) if (w.created && withdrawals.get(w.address)?.id !== w.id) lost.push(`withdrawal ${w.id} missing`);
  if (withdrawals.size !== book.withdrawals.filter((w) => w.created).length)
    lost.push(`${withdrawals.size} withdrawals in the database, ${book.withdrawals.filter((w) => w.created).length} acknowledged`);
  const transfers = await db.query<{ from_terminal_id: string; amount: string }>(
    'SELECT from_terminal_id, amount::text FROM transfers WHERE merchant_id = $1',
    [merchantId],
  );
  const stored = new Map<string, number>();
  for (const t of transfers)
    stored.set(`${t.from_terminal_id}:${new Decimal(t.amount).toFixed(6)}`, (stored.get(`${t.from_terminal_id}:${new Decimal(t.amount).toFixed(6)}`) ?? 0) + 1);
  for (const t of book.transfers) {
    if (!t.done) continue;
    const key = `${t.from}:${t.amount}`;
    const left = stored.get(key) ?? 0;
    if (left === 0) lost.push(`transfer of ${t.amount} missing`);
    else stored.set(key, left - 1);
  }
  for (const [key, left] of stored) if (left > 0) lost.push(`transfer ${key} exists ${left} time(s) more than acknowledged`);
  return lost;
}

/** Anything that happened twice. */
async function doubledOperations(db: Database, node: FakeTronNode): Promise<string[]> {
  const doubled: string[] = [];
  for (const row of await db.query<{ ext_id: string; n: number }>(
    'SELECT ext_id, count(*)::int AS n FROM payments GROUP BY merchant_id, ext_id HAVING count(*) > 1',
  )) {
    doubled.push(`payment ext_id ${row.ext_id} ×${row.n}`);
  }
  for (const row of await db.query<{ ext_id: string; n: number }>(
    'SELECT ext_id, count(*)::int AS n FROM payouts GROUP BY merchant_id, ext_id HAVING count(*) > 1',
  )) {
    doubled.push(`payout ext_id ${row.ext_id} ×${row.n}`);
  }
  for (const row of await db.query<{ kind: string; ref_id: string; n: number }>(
    `SELECT kind, ref_id, count(*)::int AS n FROM ledger_transactions WHERE ref_id IS NOT NULL GROUP BY kind, ref_id HAVING count(*) > 1`,
  )) {
    doubled.push(`ledger ${row.kind} of ${row.ref_id} ×${row.n}`);
  }
  for (const row of await db.query<{ resource_id: string; event: string; n: number }>(
    `SELECT resource_id, event, count(*)::int AS n FROM webhook_events GROUP BY resource_id, event HAVING count(*) > 1`,
  )) {
    doubled.push(`event ${row.event} of ${row.resource_id} ×${row.n}`);
  }
  for (const row of await db.query<{ address: string; n: number }>(
    'SELECT address, count(*)::int AS n FROM withdrawals GROUP BY address HAVING count(*) > 1',
  )) {
    doubled.push(`withdrawal to ${row.address} ×${row.n}`);
  }
  const onChain = new Map<string, number>();
  for (const t of node.transfers) onChain.set(t.to, (onChain.get(t.to) ?? 0) + 1);
  for (const [to, n] of onChain) if (n > 1) doubled.push(`${n} token transfers to ${to}`);
  const sent = await db.query<{ address: string; send_amount: string }>(`SELECT address, send_amount::text FROM withdrawals WHERE status = 'completed'`);
  for (const w of sent) {
    const transfer = node.transfers.find((t) => t.to === w.address);
    if (!transfer || transfer.amount !== BigInt(new Decimal(w.send_amount).mul(1e6).toFixed(0)))
      doubled.push(`withdrawal to ${w.address} completed without its token transfer`);
  }
  return doubled;
}

/** Rows whose companions (postings, events, the matched payment) are missing: a write half done. */
async function halfWrites(db: Database): Promise<string[]> {
  const problems: string[] = [];
  const check = async (what: string, sql: string) => {
    for (const row of await db.query<{ id: string }>(sql)) problems.push(`${what}: ${row.id}`);
  };
  await check(
    'completed payment without its webhook event',
    `SELECT p.id FROM payments p WHERE p.status = 'COMPLETED' AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.resource_id = p.id AND e.event = 'payment.completed')`,
  );
  await check(
    'matched notification whose payment is not completed',
    `SELECT n.id FROM notifications n JOIN payments p ON p.id = n.payment_id WHERE n.status = 'matched' AND p.status <> 'COMPLETED'`,
  );
  await check(
    'completed payment without a matched notification',
    `SELECT p.id FROM payments p WHERE p.status = 'COMPLETED' AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.payment_id = p.id AND n.status = 'matched')`,
  );
  await check(
    'payout without its reserve',
    `SELECT p.id FROM payouts p WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'payout_reserve' AND t.ref_id = p.id)`,
  );
  await check(
    'completed payout without its settlement',
    `SELECT p.id FROM payouts p WHERE p.status = 'completed' AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'payout_settle' AND t.ref_id = p.id)`,
  );
  await check(
    'failed payout without its release',
    `SELECT p.id FROM payouts p WHERE p.status = 'failed' AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'payout_release' AND t.ref_id = p.id)`,
  );
  await check(
    'settled or released payout still open',
    `SELECT p.id FROM payouts p WHERE p.status IN ('pending', 'processing') AND EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind IN ('payout_settle', 'payout_release') AND t.ref_id = p.id)`,
  );
  await check(
    'changed payout without its webhook event',
    `SELECT p.id FROM payouts p WHERE p.status <> 'pending' AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.resource_id = p.id AND e.event = 'payout.' || p.status)`,
  );
  await check(
    'withdrawal without its reserve',
    `SELECT w.id FROM withdrawals w WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'withdrawal_reserve' AND t.ref_id = w.id)`,
  );
  await check(
    'completed withdrawal without its settlement',
    `SELECT w.id FROM withdrawals w WHERE w.status = 'completed' AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'withdrawal_settle' AND t.ref_id = w.id)`,
  );
  await check(
    'transfer without its posting',
    `SELECT t.id FROM transfers t WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions l WHERE l.kind = 'transfer' AND l.ref_id = t.id)`,
  );
  return problems;
}
