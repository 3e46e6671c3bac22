import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  baseEnv,
  Client,
  cleanUp,
  Database,
  type Instance,
  percentile,
  printFigures,
  Receiver,
  sleep,
  startInstance,
  waitFor,
  workDir,
} from './harness.js';
import { cardNumber, openShop, requisiteOf, type Shop } from './shop.js';

/**
 * Issue 15, faults 2: two instances (API and job worker each) over one database for a minute,
 * under a load of creates that fight for few requisites and amounts, notifications sent to the
 * instance that did not create the payment, payouts both executors try to take at once, payments
 * expiring by the hundred (both instances sweep) and a receiver that fails some attempts. No
 * requisite goes to two PENDING payments of one amount at a time; each payment is expired once
 * (one CANCELLED event); each event reaches the receiver once per recorded attempt, in order per
 * resource, and is answered 2xx once.
 */

const LOAD_MS = Number(process.env.FAULTS_LOAD_MS ?? 60_000);
const TTL_SECONDS = 4;
/** Few amounts and requisites: the creates contend for the same (requisite, amount) pairs. */
const AMOUNTS = ['500.00', '750.00', '1000.00', '1250.00'];
const FAIL_PERCENT = 15;

let work: string;
let db: Database;
let receiver: Receiver;
let failed = true;
const instances: Instance[] = [];

beforeAll(async () => {
  work = workDir('instances');
  db = await Database.start(work);
  receiver = await new Receiver().start();
  receiver.failPercent = FAIL_PERCENT;
});

afterAll(async () => {
  for (const instance of instances) await instance.stop();
  await receiver?.close();
  await db?.stop();
  cleanUp(work, failed);
});

describe('two instances over one database', () => {
  it('never hand a requisite out twice, expire each payment once and deliver each event once per attempt', async () => {
    const env = {
      ...baseEnv(db),
      PAYMENT_TTL_SECONDS: String(TTL_SECONDS),
      KASSIR_EXPIRY_SWEEP_SECONDS: '1',
      // The requisites, not this limit, are what the creates run out of.
      SAME_AMOUNT_LIMIT: '1000',
      KASSIR_WEBHOOK_RETRY_BASE_MS: '300',
    };
    // One after the other: the first applies the migrations.
    instances.push(await startInstance(work, 'a', env));
    instances.push(await startInstance(work, 'b', env));
    const [a, b] = instances as [Instance, Instance];
    const viaA = new Client(() => a);
    const viaB = new Client(() => b);
    const shop: Shop = await openShop(viaA, { funds: ['100000'], executors: 2, requisitesEach: 4 });
    const terminal = shop.terminals[0]!;
    const [first, second] = shop.executors as [Shop['executors'][0], Shop['executors'][0]];

    const answers: { what: string; via: string; answer: Answer }[] = [];
    const record = (what: string, via: string, answer: Answer) => {
      answers.push({ what, via, answer });
      return answer;
    };
    const toNotify: { id: string; requisiteId: string; token: string; amount: string; via: Client }[] = [];
    let created = 0;
    let refusedNoRequisite = 0;
    let completed = 0;
    const takeRaces: { winners: number; losers: number }[] = [];
    let samples = 0;
    let simultaneous = 0;
    let stop = false;
    const loop = async (body: () => Promise<void>) => {
      while (!stop) await body();
    };
    const createVia = (client: Client, name: string, other: Client) => async () => {
      const amount = AMOUNTS[Math.floor(Math.random() * AMOUNTS.length)]!;
      const body = { ext_id: `two-${randomUUID().slice(0, 12)}`, amount: Number(amount), currency: 'RUB', method: 'CARD', notify_url: receiver.url };
      const answer = record('create', name, await client.merchant(terminal, 'POST', '/v1/payments', body, randomUUID()));
      if (answer.status === 200) {
        created++;
        const { executor, requisiteId } = requisiteOf(shop, answer.body);
        // A third are paid, reported to the other instance.
        if (Math.random() < 0.3) toNotify.push({ id: answer.body.id, requisiteId, token: executor.token, amount, via: other });
      } else if (answer.status === 503 && answer.body?.error === 'PAY_004') {
        refusedNoRequisite++;
        await sleep(25);
      }
    };
    const loops = [
      loop(createVia(viaA, 'a', viaB)),
      loop(createVia(viaA, 'a', viaB)),
      loop(createVia(viaB, 'b', viaA)),
      loop(createVia(viaB, 'b', viaA)),
      loop(async () => {
        const p = toNotify.shift();
        if (!p) return sleep(10);
        const answer = record(
          'notification',
          'either',
          await p.via.executor(p.token, 'POST', '/notifications', { requisite_id: p.requisiteId, amount: Number(p.amount) }),
        );
        if (answer.status === 200 && answer.body.matched) completed++;
      }),
      // Payouts: both executors take each one at the same moment, one through each instance.
      loop(async () => {
        const payout = record(
          'payout',
          'a',
          await viaA.merchant(
            terminal,
            'POST',
            '/v1/payouts',
            {
              ext_id: `two-po-${randomUUID().slice(0, 8)}`,
              amount: 1000,
              method: 'card',
              requisites: cardNumber(),
              holder_name: 'Petr P.',
              bank: 'sberbank',
              notify_url: receiver.url,
            },
            randomUUID(),
          ),
        );
        if (payout.status !== 200) return;
        const takes = await Promise.all([
          viaA.executor(first.token, 'POST', `/payouts/${payout.body.id}/take`),
          viaB.executor(second.token, 'POST', `/payouts/${payout.body.id}/take`),
        ]);
        for (const [i, t] of takes.entries()) record('take', i === 0 ? 'a' : 'b', t);
        takeRaces.push({ winners: takes.filter((t) => t.status === 200).length, losers: takes.filter((t) => t.status === 409).length });
        const winner = takes[0]!.status === 200 ? first : second;
        record(
          'payout complete',
          'b',
          await viaB.executorUpload(
            winner.token,
            `/payouts/${payout.body.id}/complete`,
            'proof',
            Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'),
          ),
        );
        await sleep(100);
      }),
      // Watches the database: two PENDING payments on one requisite with one amount, seen at one moment.
      (async () => {
        const watcher = await db.client();
        try {
          while (!stop) {
            const { rows } = await watcher.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM (SELECT 1 FROM payments WHERE status = 'PENDING' GROUP BY requisite_id, payer_amount HAVING count(*) > 1) d`,
            );
            samples++;
            simultaneous += rows[0]!.n;
            await sleep(100);
          }
        } finally {
          await watcher.end();
        }
      })(),
    ];
    await sleep(LOAD_MS);
    stop = true;
    await Promise.all(loops);

    // ---- every payment ends (expired by either instance's sweep, or completed); every event is delivered
    await waitFor(
      'every payment ended',
      async () => {
        const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'PENDING'`);
        return row!.n === 0;
      },
      (TTL_SECONDS + 60) * 1000,
    );
    await waitFor(
      'every webhook event delivered',
      async () => {
        const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_events WHERE status <> 'delivered'`);
        return row!.n === 0;
      },
      120_000,
      500,
    );

    // ---- requisites: PENDING intervals of one requisite and one amount never overlap. The times are
    // those of the writing transactions' starts (now()), so one payment's end and the next one's
    // start may cross by the length of a transaction: an overlap counts from 1 s on.
    const [overlaps] = await db.query<{ n: number; longest_ms: number | null }>(
      `WITH iv AS (
         SELECT id, requisite_id, payer_amount, created_at AS s,
                CASE WHEN status = 'PENDING' THEN 'infinity'::timestamptz WHEN completed_at IS NOT NULL THEN completed_at ELSE updated_at END AS e
           FROM payments)
       SELECT count(*) FILTER (WHERE least(x.e, y.e) - greatest(x.s, y.s) >= interval '1 second')::int AS n,
              (max(extract(epoch FROM least(x.e, y.e) - greatest(x.s, y.s))) * 1000)::int AS longest_ms
         FROM iv x JOIN iv y ON x.requisite_id = y.requisite_id AND x.payer_amount = y.payer_amount AND x.id < y.id AND x.s < y.e AND y.s < x.e`,
    );
    const [shared] = await db.query<{ pairs: number; payments: number }>(
      `SELECT count(DISTINCT (requisite_id, payer_amount))::int AS pairs, count(*)::int AS payments FROM payments`,
    );

    // ---- expiry: one CANCELLED event per cancelled payment, none for a completed one; both sweeps' logs add up
    const [expiry] = await db.query<{ cancelled: number; events: number; doubled: number; both: number; completed: number }>(
      `SELECT (SELECT count(*) FROM payments WHERE status = 'CANCELLED')::int AS cancelled,
              (SELECT count(*) FROM webhook_events WHERE event = 'payment.cancelled')::int AS events,
              (SELECT count(*) FROM (SELECT 1 FROM webhook_events WHERE event = 'payment.cancelled' GROUP BY resource_id HAVING count(*) > 1) d)::int AS doubled,
              (SELECT count(*) FROM payments p WHERE EXISTS (SELECT 1 FROM webhook_events e WHERE e.resource_id = p.id AND e.event = 'payment.cancelled')
                                                AND EXISTS (SELECT 1 FROM webhook_events e WHERE e.resource_id = p.id AND e.event = 'payment.completed'))::int AS both,
              (SELECT count(*) FROM payments WHERE status = 'COMPLETED')::int AS completed`,
    );
    const sweptBy = (instance: Instance) =>
      instance
        .logLines()
        .filter((l) => l.msg === 'expired pending payments')
        .reduce((sum, l) => sum + Number(l.expired), 0);
    const sweptA = sweptBy(a);
    const sweptB = sweptBy(b);

    // ---- deliveries: the receiver's log against the service's record of attempts
    const attempts = new Map(
      (
        await db.query<{ event_id: string; n: number; last_status: number | null }>(
          `SELECT event_id, count(*)::int AS n, (array_agg(status_code ORDER BY attempt DESC))[1] AS last_status FROM webhook_attempts GROUP BY event_id`,
        )
      ).map((r) => [r.event_id, r]),
    );
    const events = await db.query<{ id: string; resource_id: string }>('SELECT id, resource_id FROM webhook_events ORDER BY seq');
    const hits = new Map<string, typeof receiver.deliveries>();
    for (const d of receiver.deliveries) hits.set(d.eventId, [...(hits.get(d.eventId) ?? []), d]);
    const deliveryProblems: string[] = [];
    let retried = 0;
    for (const event of events) {
      const got = hits.get(event.id) ?? [];
      const recorded = attempts.get(event.id);
      if (got.length !== (recorded?.n ?? 0)) deliveryProblems.push(`event ${event.id}: ${got.length} requests received, ${recorded?.n ?? 0} attempts recorded`);
      const ok = got.filter((d) => d.status === 200);
      if (ok.length !== 1) deliveryProblems.push(`event ${event.id} answered 2xx ${ok.length} times`);
      else if (got.at(-1) !== ok[0]) deliveryProblems.push(`event ${event.id} sent again after it was answered 2xx`);
      if (got.length > 1) retried++;
    }
    const unknown = [...hits.keys()].filter((id) => !events.some((e) => e.id === id));
    if (unknown.length) deliveryProblems.push(`${unknown.length} events received that the outbox does not hold`);
    // In order per resource: each event answered 2xx before the resource's next one was first sent.
    const byResource = new Map<string, string[]>();
    for (const event of events) byResource.set(event.resource_id, [...(byResource.get(event.resource_id) ?? []), event.id]);
    let outOfOrder = 0;
    for (const ids of byResource.values()) {
      for (let i = 1; i < ids.length; i++) {
        const previousOk = (hits.get(ids[i - 1]!) ?? []).find((d) => d.status === 200);
        const nextFirst = (hits.get(ids[i]!) ?? [])[0];
        if (previousOk && nextFirst && nextFirst.at < previousOk.at) {
          outOfOrder++;
          deliveryProblems.push(`${nextFirst.event} of ${nextFirst.resourceId} received before ${previousOk.event} was answered`);
        }
      }
    }

    const failures = answers.filter((x) => x.answer.status === 0 || (x.answer.status >= 500 && x.answer.body?.error !== 'PAY_004'));
    const ledger = await viaB.adminOk('GET', '/ledger/check');
    const takeProblems = takeRaces.filter((r) => r.winners !== 1 || r.losers !== 1).length;
    const createMs = answers.filter((x) => x.what === 'create').map((x) => x.answer.ms);

    printFigures(
      'two instances',
      `${created} payments created over ${LOAD_MS / 1000} s on ${shared!.pairs} (requisite, amount) pairs, requisite handed out twice ${simultaneous + overlaps!.n}, ` +
        `${expiry!.cancelled} expired with ${expiry!.events} CANCELLED events (doubled ${expiry!.doubled}), ` +
        `delivered ${events.length}/${events.length} events once per attempt (${deliveryProblems.length} problems, ${outOfOrder} out of order), ledger ${ledger.ok ? 'ok' : 'NOT ok'}`,
      {
        creates: `${answers.filter((x) => x.what === 'create').length} sent half to each instance: ${created} created, ${refusedNoRequisite} refused PAY_004 (every pair busy); p50 ${Math.round(percentile(createMs, 50))} ms, p99 ${Math.round(percentile(createMs, 99))} ms`,
        requisites: `${samples} looks at the database during the load saw two PENDING payments on one requisite and amount ${simultaneous} times; overlapping PENDING intervals afterwards: ${overlaps!.n} (longest crossing ${overlaps!.longest_ms ?? 0} ms)`,
        expiry: `${sweptA} expired by instance a, ${sweptB} by instance b (sum ${sweptA + sweptB}, cancelled ${expiry!.cancelled}); ${expiry!.both} payments with both a completed and a cancelled event; ${expiry!.completed} completed (${completed} by notifications)`,
        'payout takes': `${takeRaces.length} races of two executors through two instances: ${takeRaces.length - takeProblems} with exactly one winner`,
        webhooks: `${receiver.deliveries.length} requests for ${events.length} events; ${receiver.deliveries.filter((d) => d.status !== 200).length} answered 500 by the receiver (${FAIL_PERCENT} %), ${retried} events retried`,
        errors: `${failures.length} requests failed (5xx other than PAY_004, or no answer)`,
        ...(deliveryProblems.length ? { 'delivery problems': deliveryProblems.slice(0, 8).join('; ') } : {}),
        ...(failures.length
          ? {
              'failed requests': failures
                .slice(0, 8)
                .map((x) => `${x.what} via ${x.via}: ${x.answer.status} ${x.answer.error ?? JSON.stringify(x.answer.body)?.slice(0, 120)}`)
                .join(' | '),
            }
          : {}),
      },
    );

    expect(created).toBeGreaterThan(0);
    expect(refusedNoRequisite).toBeGreaterThan(0);
    expect(simultaneous).toBe(0);
    expect(overlaps!.n).toBe(0);
    expect(expiry!.events).toBe(expiry!.cancelled);
    expect(expiry!.doubled).toBe(0);
    expect(expiry!.both).toBe(0);
    expect(sweptA + sweptB).toBe(expiry!.cancelled);
    expect(takeProblems).toBe(0);
    expect(deliveryProblems).toEqual([]);
    expect(outOfOrder).toBe(0);
    expect(failures.map((x) => `${x.what} ${x.answer.status}`)).toEqual([]);
    expect(ledger).toEqual({ ok: true, problems: [] });
    failed = false;
  }, 600_000);
});
