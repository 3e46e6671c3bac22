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
import { openShop, requisiteOf, rubles, type Shop } from './shop.js';

/**
 * Issue 15, faults 3: the database restarted, then stopped for several seconds, under load. The
 * service is not restarted: it must answer meanwhile — 503 UNAVAILABLE with Retry-After and the
 * error body, promptly, never a 500 and never a hang — and /healthz 503; once the database is
 * back, requests succeed again by themselves, and the job worker (expiry, webhook dispatch), the
 * identity cache's listener and the webhook wake-up listener work again.
 */

/** Payments expire soon, so that the worker's expiry sweep after the outage is seen. */
const TTL_SECONDS = 6;
const STOPPED_MS = 8_000;

interface Seen {
  at: number;
  what: string;
  phase: string;
  answer: Answer;
}

let work: string;
let db: Database;
let receiver: Receiver;
let instance: Instance | undefined;
let failed = true;

beforeAll(async () => {
  work = workDir('database');
  db = await Database.start(work);
  receiver = await new Receiver().start();
});

afterAll(async () => {
  await instance?.stop();
  await receiver?.close();
  await db?.stop();
  cleanUp(work, failed);
});

describe('the database restarted and stopped under load', () => {
  it('answers 503 promptly meanwhile and recovers by itself', async () => {
    instance = await startInstance(work, 'service', { ...baseEnv(db), PAYMENT_TTL_SECONDS: String(TTL_SECONDS), KASSIR_EXPIRY_SWEEP_SECONDS: '1' });
    const client = new Client(() => instance!);
    const shop: Shop = await openShop(client, { funds: ['1000', '1000', '0'], executors: 1, requisitesEach: 30 });
    const [t1, t2, spare] = shop.terminals as [Shop['terminals'][0], Shop['terminals'][0], Shop['terminals'][0]];

    let phase = 'before';
    const seen: Seen[] = [];
    const record = (what: string, answer: Answer) => {
      seen.push({ at: Date.now(), what, phase, answer });
      return answer;
    };
    // Creates answered 503 (or cut off): the client retries them with their Idempotency-Key later.
    const unanswered: { extId: string; send: () => Promise<Answer> }[] = [];
    const created: { id: string; extId: string; amount: string; requisiteId: string; token: string; at: number }[] = [];
    const toNotify: typeof created = [];
    let stop = false;
    const loop = async (body: () => Promise<void>) => {
      while (!stop) await body();
    };
    const createOnce = async () => {
      const extId = `db-${randomUUID().slice(0, 12)}`;
      const amount = rubles(100, 5000);
      const key = randomUUID();
      const body = { ext_id: extId, amount: Number(amount), currency: 'RUB', method: 'CARD', notify_url: receiver.url };
      const send = () => client.merchant(t1, 'POST', '/v1/payments', body, key);
      const answer = record('create', await send());
      if (answer.status === 200 || answer.status === 201) {
        const { executor, requisiteId } = requisiteOf(shop, answer.body);
        const payment = { id: answer.body.id, extId, amount, requisiteId, token: executor.token, at: Date.now() };
        created.push(payment);
        if (Math.random() < 0.5) toNotify.push(payment);
      } else {
        unanswered.push({ extId, send });
        await sleep(20);
      }
    };
    const loops = [
      loop(createOnce),
      loop(createOnce),
      loop(async () => {
        const p = toNotify.shift();
        if (!p) return sleep(10);
        const answer = record(
          'notification',
          await client.executor(p.token, 'POST', '/notifications', { requisite_id: p.requisiteId, amount: Number(p.amount) }),
        );
        if (answer.status !== 200) await sleep(20);
      }),
      loop(async () => {
        record(
          'transfer',
          await client.merchant(t2, 'POST', '/v1/transfers', { from_terminal_id: t2.terminalId, to_terminal_id: t1.terminalId, amount: 0.01 }, randomUUID()),
        );
        await sleep(20);
      }),
      loop(async () => {
        record('balance', await client.merchant(t1, 'GET', '/v1/balance'));
        await sleep(20);
      }),
      loop(async () => {
        record('healthz', await client.call('GET', '/healthz'));
        await sleep(50);
      }),
    ];

    await sleep(4_000);
    // ---- a restart: fast shutdown (sessions terminated), then a new start on the same files
    phase = 'restart';
    const restartStarted = Date.now();
    await db.stop();
    await db.start();
    const restartedAt = Date.now();
    const restartMs = restartedAt - restartStarted;
    phase = 'after restart';
    const firstOkAfterRestart = await waitFor(
      'a create succeeding after the restart',
      async () => seen.find((s) => s.phase === 'after restart' && s.what === 'create' && s.answer.status === 200),
      30_000,
      50,
    );
    const restartRecoveryMs = firstOkAfterRestart.at - restartedAt;
    await sleep(4_000);

    // ---- stopped for several seconds
    phase = 'stopped';
    await db.stop();
    const downAt = Date.now();
    await sleep(STOPPED_MS);
    const startingAt = Date.now();
    await db.start();
    const recoveredAt = Date.now();
    phase = 'after stop';
    const firstOkAfterStop = await waitFor(
      'a create succeeding after the stop',
      async () => seen.find((s) => s.phase === 'after stop' && s.what === 'create' && s.answer.status === 200),
      30_000,
      50,
    );
    const stopRecoveryMs = firstOkAfterStop.at - recoveredAt;
    await sleep(5_000);
    stop = true;
    await Promise.all(loops);

    // ---- what was answered while the database was away
    const outage = seen.filter((s) => s.phase === 'restart' || s.phase === 'stopped');
    const bad = outage.filter((s) => {
      const a = s.answer;
      if (a.status >= 200 && a.status < 300) return false;
      return !(a.status === 503 && a.body?.error === 'UNAVAILABLE' && typeof a.body.message === 'string' && Number(a.headers?.get('retry-after')) > 0);
    });
    const unavailable = outage.filter((s) => s.answer.status === 503).length;
    const healthDown = outage.filter((s) => s.what === 'healthz' && s.answer.status === 503).length;
    // Asked once the database had stopped (not while it was shutting down) and answered before it
    // was started again (a request waiting for a connection may be answered by the restarted one,
    // and recorded before this test's next line names the phase).
    const healthUpDuringStop = seen.filter((s) => s.what === 'healthz' && s.answer.status === 200 && s.answer.sentAt > downAt && s.at < startingAt).length;
    const longest = outage.reduce((max, s) => Math.max(max, s.answer.ms), 0);
    // Later: everything succeeds again without a restart of the service.
    const tail = seen.filter((s) => s.phase === 'after stop' && s.at > firstOkAfterStop.at + 1000);
    const tailFailures = tail.filter((s) => s.answer.status !== 200 && !(s.what === 'notification' && s.answer.status === 200));
    const otherFailures = seen.filter(
      (s) => (s.phase === 'before' || (s.phase === 'after restart' && s.at > firstOkAfterRestart.at + 1000)) && s.answer.status !== 200,
    );

    // ---- creates left without an answer: retried with their Idempotency-Key, each gets one
    let retriedCreated = 0;
    let retriedExisting = 0;
    const retryStarted = Date.now();
    const retryQueue = [...unanswered];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let u = retryQueue.shift(); u; u = retryQueue.shift()) {
          const { extId, send } = u;
          const answer = await waitFor(
            `the retry of ${extId}`,
            async () => {
              const a = await send();
              return a.status > 0 && a.status < 500 && !(a.status === 409 && a.headers?.get('retry-after')) ? a : undefined;
            },
            60_000,
            500,
          );
          if (answer.status === 200) retriedCreated++;
          else if (answer.status === 409 && answer.body.error === 'PAY_003') retriedExisting++;
          else throw new Error(`retry of ${extId}: ${answer.status} ${JSON.stringify(answer.body)}`);
        }
      }),
    );
    const retryMs = Date.now() - retryStarted;
    const duplicates = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM (SELECT 1 FROM payments GROUP BY merchant_id, ext_id HAVING count(*) > 1) d',
    );

    // ---- the listeners are back: both listening connections, and the log says so
    const listeners = await db.query<{ application_name: string }>(
      `SELECT application_name FROM pg_stat_activity WHERE application_name IN ('kassir identity announcements', 'kassir webhook announcements')`,
    );
    const logLines = instance.logLines();
    const logged = logLines.map((l) => String(l.msg));
    const backAfterStop = logLines
      .filter((l) => /announcements are back/.test(String(l.msg)) && Date.parse(l.time) >= recoveredAt - 1000)
      .map((l) => Date.parse(l.time) - recoveredAt);
    // The identity cache forgets a terminal switched off by plain SQL (announced by migration 011's trigger).
    expect((await client.merchant(spare, 'GET', '/v1/balance')).status).toBe(200);
    await db.query('UPDATE terminals SET is_active = false WHERE id = $1', [spare.terminalId]);
    const identityStarted = Date.now();
    await waitFor('the switched-off terminal refused', async () => (await client.merchant(spare, 'GET', '/v1/balance')).status === 403, 20_000, 50);
    const identityMs = Date.now() - identityStarted;
    // A completion after the outage reaches the receiver through the wake-up listener.
    const fresh = await client.merchant(t1, 'POST', '/v1/payments', {
      ext_id: `db-probe-${randomUUID().slice(0, 8)}`,
      amount: 777.77,
      currency: 'RUB',
      method: 'CARD',
      notify_url: receiver.url,
    });
    expect(fresh.status).toBe(200);
    const { executor: probeOwner, requisiteId: probeRequisite } = requisiteOf(shop, fresh.body);
    const probe = { id: fresh.body.id as string, amount: '777.77', requisiteId: probeRequisite, token: probeOwner.token };
    const completed = await client.executor(probe.token, 'POST', '/notifications', { requisite_id: probe.requisiteId, amount: Number(probe.amount) });
    const webhookStarted = Date.now();
    let webhookMs = -1;
    if (completed.status === 200 && completed.body.matched) {
      await waitFor(
        'the completion webhook',
        async () => receiver.deliveries.some((d) => d.resourceId === probe.id && d.event === 'payment.completed'),
        90_000,
        50,
      );
      webhookMs = Date.now() - webhookStarted;
    }
    // The worker's expiry sweep runs again: every payment created after the outage expires in time.
    await waitFor(
      'payments created after the outage expired',
      async () => {
        const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'PENDING'`);
        return row!.n === 0;
      },
      (TTL_SECONDS + 60) * 1000,
    );
    const [expired] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'CANCELLED' AND created_at > $1`, [
      new Date(recoveredAt),
    ]);
    await waitFor(
      'every webhook event delivered',
      async () => {
        const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_events WHERE status <> 'delivered'`);
        return row!.n === 0;
      },
      120_000,
      1000,
    );
    const [events] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_events');
    const ledger = await client.adminOk('GET', '/ledger/check');
    const lost = created.length - (await db.query('SELECT 1 FROM payments WHERE id = ANY($1::uuid[])', [created.map((p) => p.id)])).length;

    const outageMs = outage.map((s) => s.answer.ms);
    printFigures(
      'database restart and stop',
      `${outage.length} requests during the outages: ${outage.length - unavailable - bad.length} 2xx, ${unavailable} 503 UNAVAILABLE, ${bad.length} other; ` +
        `longest answer ${Math.round(longest)} ms; first success ${restartRecoveryMs} ms after the restart, ${stopRecoveryMs} ms after the stop; ` +
        `lost ${lost}, doubled ${duplicates[0]!.n}, delivered ${events!.n}/${events!.n} events, ledger ${ledger.ok ? 'ok' : 'NOT ok'}`,
      {
        restart: `fast shutdown and start took ${(restartMs / 1000).toFixed(1)} s; first create succeeded ${restartRecoveryMs} ms after the start`,
        stopped: `${STOPPED_MS / 1000} s down; first create succeeded ${stopRecoveryMs} ms after the start`,
        'answer times during the outages': `p50 ${Math.round(percentile(outageMs, 50))} ms, p99 ${Math.round(percentile(outageMs, 99))} ms, max ${Math.round(longest)} ms (client gives up at 30 s: ${outage.filter((s) => s.answer.status === 0).length} timed out or cut)`,
        '/healthz': `${healthDown} × 503 during the outages, ${healthUpDuringStop} × 200 while stopped`,
        'after recovery': `${tail.length} requests, ${tailFailures.length} not 2xx; before and between the outages ${otherFailures.length} not 2xx`,
        'creates answered 503, retried with their Idempotency-Key': `${unanswered.length}: ${retriedCreated} created now, ${retriedExisting} had been created (PAY_003), all answered within ${(retryMs / 1000).toFixed(1)} s`,
        listeners: `${listeners
          .map((l) => l.application_name)
          .sort()
          .join(
            ', ',
          )} connected; log: ${logged.filter((m) => /announcements are back/.test(m)).length} × "announcements are back", after the stop ${backAfterStop.map((ms) => `${ms} ms`).join(' and ')} after the start`,
        'identity cache': `a terminal switched off by SQL refused after ${identityMs} ms`,
        'webhook wake-up':
          webhookMs >= 0
            ? `a completion delivered ${webhookMs} ms after the notification`
            : `the probe payment had expired (${completed.status} ${JSON.stringify(completed.body)})`,
        worker: `${expired!.n} payments created after the stop expired by the sweep`,
        ...(bad.length
          ? {
              'bad answers': bad
                .slice(0, 8)
                .map(
                  (s) =>
                    `${s.what} ${s.answer.status} ${s.answer.error ?? JSON.stringify(s.answer.body)?.slice(0, 120)} retry-after=${s.answer.headers?.get('retry-after')}`,
                )
                .join(' | '),
            }
          : {}),
        ...(tailFailures.length
          ? {
              'failures after recovery': tailFailures
                .slice(0, 8)
                .map((s) => `${s.what} ${s.answer.status} ${JSON.stringify(s.answer.body)?.slice(0, 120)}`)
                .join(' | '),
            }
          : {}),
      },
    );

    expect(bad.map((s) => `${s.what} ${s.answer.status} ${s.answer.error ?? JSON.stringify(s.answer.body)}`)).toEqual([]);
    expect(unavailable).toBeGreaterThan(0);
    expect(healthDown).toBeGreaterThan(0);
    expect(healthUpDuringStop).toBe(0);
    expect(longest).toBeLessThan(10_000);
    expect(tailFailures).toEqual([]);
    expect(otherFailures).toEqual([]);
    expect(lost).toBe(0);
    expect(duplicates[0]!.n).toBe(0);
    expect(listeners.map((l) => l.application_name).sort()).toEqual(['kassir identity announcements', 'kassir webhook announcements']);
    expect(webhookMs).toBeGreaterThanOrEqual(0);
    expect(ledger).toEqual({ ok: true, problems: [] });
    failed = false;
  }, 600_000);
});
