/*
 * Confirm, receipts and disputes against the spec (spec "Payment transitions", "POST
 * /v1/payments/{id}/confirm", "/receipt", "/dispute", "/dispute/cancel") and DESIGN.md decisions
 * 5–7. Which test covers which rule:
 *
 * Transition table rows touched by these endpoints
 * - PENDING —confirm→ PENDING (unchanged), signal in the deal card, receipt kept for the reviewer:
 *     "confirm: keeps PENDING, answers the Payment plus message, records the signal and the receipt";
 *     "confirm: an empty body (no content-type, no body) is valid"; "confirm: a receipt_url in the multipart
 *     `data` part …"; operator review "lists open disputes …" (the confirm receipt on the dispute card).
 * - PENDING —verification after confirm, transfer not found→ CANCELLED:
 *     "verification: a confirmed payment without a notification is CANCELLED (transfer_not_found)".
 * - PENDING —notification, transfer verified→ COMPLETED (after a confirm):
 *     "verification: a confirmed payment stays PENDING past valid_until … its notification completes it".
 * - PENDING —timeout→ CANCELLED (an unconfirmed payment, next to a confirmed one): same test.
 * - CANCELLED —dispute→ DISPUTE: "dispute: opens from CANCELLED with the spec's response shape";
 *     "reject → CANCELLED, and a new dispute can be opened again".
 * - CANCELLED_APPEAL —dispute (re-opening)→ DISPUTE: "dispute: re-opening after a cancel …".
 * - DISPUTE —dispute/cancel→ CANCELLED_APPEAL: "dispute/cancel: DISPUTE → CANCELLED_APPEAL".
 * - DISPUTE —approved→ COMPLETED (funds credited): "approve with the order amount → COMPLETED …".
 * - DISPUTE —approved for another amount→ COMPLETED_APPEAL (decision 7): "approve with another amount …".
 * - DISPUTE —rejected→ CANCELLED: "reject → CANCELLED, and a new dispute can be opened again".
 * - "The receipt endpoint changes no status": "receipt: accepted in PENDING, DISPUTE, CANCELLED and
 *     CANCELLED_APPEAL, status unchanged".
 *
 * Error codes
 * - confirm PAY_008 + data.status (COMPLETED, CANCELLED, DISPUTE, CANCELLED_APPEAL, COMPLETED_APPEAL):
 *     "confirm: PAY_008 with data.status in every status but PENDING"; decision 7 test.
 * - confirm PAY_006 (unknown, other merchant, not a UUID): "confirm: PAY_006 …"; isolation test.
 * - receipt PAY_008 + data.status (COMPLETED, COMPLETED_APPEAL): "receipt: PAY_008 for completed payments".
 * - receipt PAY_002 (neither file nor link, bad link, bad JSON part): "receipt: PAY_002 …".
 * - receipt PAY_006: "receipt: PAY_006 …"; isolation test.
 * - dispute DIS_001 (PENDING, COMPLETED, COMPLETED_APPEAL): "dispute: DIS_001 …"; decision 7 test.
 * - dispute DIS_002 (already DISPUTE, 409): "dispute: DIS_002 …".
 * - dispute PAY_002 (negative, zero, string, 3 decimals): "dispute: PAY_002 for a bad amount …".
 * - dispute PAY_006: "dispute: PAY_006 …"; isolation test.
 * - dispute/cancel DIS_003 (every other status), PAY_006: "dispute/cancel: DIS_003 …", "dispute/cancel: PAY_006 …".
 * - PAY_009 / PAY_010 (upload limits): covered by the upload tests, not here.
 *
 * Receipt rules
 * - In DISPUTE a receipt goes onto the dispute card only when it has none; never overwritten:
 *     "receipt in DISPUTE: the dispute's first receipt is never overwritten" (both orders).
 * - Receipts are served only to the owning merchant and the operator: isolation test.
 *
 * Operator review (DESIGN.md decision 7, issue 5 "Build" 5)
 * - Open disputes listed with payment, receipts, confirm signals and executor notifications:
 *     "operator review: lists open disputes …".
 * - Approve = order amount → COMPLETED, credited amount / rate × (1 − payin_rate / 100); another
 *     amount → COMPLETED_APPEAL credited for the received amount; reject → CANCELLED; each with
 *     audit_log (who, what, before → after) and the merchant's webhook event; approve/reject of a
 *     non-DISPUTE payment → DIS_003: the "operator review" tests; GET /admin/v1/ledger/check ok: the race tests and
 *     "ledger after everything" (run after all the decisions above).
 * - Decision 7: a completed payment (either kind) accepts no dispute, confirm or receipt:
 *     "decision 7: a completed payment accepts no dispute, confirm or receipt".
 * - Decision 5: dispute / dispute-cancel responses use `dispute` / `cancelled_appeal`; the others
 *     upper case: asserted in the dispute, dispute/cancel and receipt tests.
 * - Decision 6: confirm never enters PROCESSING: the confirm tests assert PENDING in the response and on read.
 *
 * Races (issue 5 "Done when")
 * - Dispute approval against dispute cancel, 20 times over two instances: exactly one wins, credit
 *     posted at most once, ledger balanced: "race: approve against cancel …".
 * - Two approvals at once: one credit: "race: two approvals …".
 */
import { Decimal } from 'decimal.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../src/instance.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  signedMultipart,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
  until,
} from './helpers.js';

const RATE = '95.5';
const PAYIN_RATE = '2.5';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

type Status = 'PENDING' | 'CANCELLED' | 'DISPUTE' | 'CANCELLED_APPEAL' | 'COMPLETED' | 'COMPLETED_APPEAL';
type Json = Record<string, any>;

/** The expected net pay-in credit (DESIGN.md decision 11), 6 decimals half-up. */
function expectedCredit(amount: Decimal.Value, rate: Decimal.Value = RATE, payinRate: Decimal.Value = PAYIN_RATE): string {
  return new Decimal(amount)
    .div(rate)
    .mul(new Decimal(1).minus(new Decimal(payinRate).div(100)))
    .toDecimalPlaces(6, Decimal.ROUND_HALF_UP)
    .toFixed(6);
}

/**
 * A small world on one service: a merchant, an executor with requisites, and helpers that drive
 * a fresh payment into any status through the public paths (create, executor notification,
 * operator cancel, merchant dispute, operator decision).
 */
function world(get: () => { app: FastifyInstance; service: TestService; merchant: MerchantCredentials; executor: { id: string; token: string } }) {
  // Every payment gets its own amount, so the cascade never runs out of requisites for it.
  let nextAmount = 1000;

  async function newPayment(extra: Json = {}, creds?: MerchantCredentials): Promise<Json> {
    const { app, merchant } = get();
    const { status, body } = await createPayment(app, creds ?? merchant, { ext_id: uniqueExtId(), amount: nextAmount++, ...extra });
    expect(status, JSON.stringify(body)).toBe(200);
    return body;
  }

  async function row(id: string): Promise<Json> {
    const { rows } = await get().service.ctx.db.query(
      'SELECT status, cancel_reason, requisite_id, payer_amount::text, amount::text, verify_until, valid_until, created_at FROM payments WHERE id = $1',
      [id],
    );
    return rows[0];
  }

  async function notify(paymentId: string, amount?: string): Promise<Json> {
    const { app, executor } = get();
    const payment = await row(paymentId);
    const res = await app.inject({
      method: 'POST',
      url: '/executor/v1/notifications',
      headers: { authorization: `Bearer ${executor.token}`, 'content-type': 'application/json' },
      payload: { requisite_id: payment.requisite_id, amount: Number(amount ?? payment.payer_amount), received_at: new Date().toISOString() },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  /** Drives a fresh payment into `status` and returns it (as created). */
  async function paymentIn(status: Status, extra: Json = {}): Promise<Json> {
    const { app, merchant } = get();
    const payment = await newPayment(extra);
    if (status === 'PENDING') return payment;
    if (status === 'COMPLETED') {
      expect((await notify(payment.id)).matched).toBe(true);
      return payment;
    }
    await adminOk(app, 'POST', `/payments/${payment.id}/cancel`);
    if (status === 'CANCELLED') return payment;
    const opened = await signed(app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, {});
    expect(opened.statusCode, opened.body).toBe(200);
    if (status === 'DISPUTE') return payment;
    if (status === 'CANCELLED_APPEAL') {
      const cancelled = await signed(app, merchant, 'POST', `/v1/payments/${payment.id}/dispute/cancel`);
      expect(cancelled.statusCode, cancelled.body).toBe(200);
      return payment;
    }
    // COMPLETED_APPEAL: approved for less than the order.
    await adminOk(app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: payment.amount - 1 });
    return payment;
  }

  async function statusOf(id: string): Promise<string> {
    return (await row(id)).status;
  }

  async function payinCredits(id: string): Promise<string[]> {
    const { rows } = await get().service.ctx.db.query<{ amount: string }>(
      `SELECT e.amount::text FROM ledger_transactions t
         JOIN ledger_entries e ON e.transaction_id = t.id
         JOIN ledger_accounts a ON a.id = e.account_id AND a.kind = 'terminal_available'
        WHERE t.kind = 'payin' AND t.ref_id = $1`,
      [id],
    );
    return rows.map((r) => r.amount);
  }

  async function payinCount(id: string): Promise<number> {
    const { rows } = await get().service.ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = 'payin' AND ref_id = $1`,
      [id],
    );
    return rows[0]!.n;
  }

  return { newPayment, row, notify, paymentIn, statusOf, payinCredits, payinCount };
}

let service: TestService;
let merchant: MerchantCredentials;
let other: MerchantCredentials;
let executor: { id: string; token: string };
const w = world(() => ({ app: service.app, service, merchant, executor }));

const ALL_STATUSES: Status[] = ['PENDING', 'CANCELLED', 'DISPUTE', 'CANCELLED_APPEAL', 'COMPLETED', 'COMPLETED_APPEAL'];

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', Number(RATE));
  merchant = await createMerchant(service.app, { payin_rate: Number(PAYIN_RATE) });
  other = await createMerchant(service.app, { payin_rate: 1 });
  executor = await createExecutor(service.app);
  for (let i = 0; i < 4; i++) await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close());

describe('POST /v1/payments/{id}/confirm', () => {
  it('confirm: keeps PENDING, answers the Payment plus message, records the signal and the receipt', async () => {
    const payment = await w.newPayment();
    const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/confirm`, { receipt_url: 'https://shop.example/receipts/1.pdf' });
    expect(res.statusCode, res.body).toBe(200);
    const read = (await signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`)).json();
    expect(read.status).toBe('PENDING');
    // The Payment object as GET returns it, plus `message`.
    expect(res.json()).toEqual({ ...read, message: expect.any(String) });
    expect(res.json().message.length).toBeGreaterThan(0);

    const { rows: confirmations } = await service.ctx.db.query('SELECT source, receipt_id FROM payment_confirmations WHERE payment_id = $1', [payment.id]);
    expect(confirmations).toHaveLength(1);
    expect(confirmations[0].source).toBe('merchant');
    const { rows: receipts } = await service.ctx.db.query('SELECT id, source, url, storage_key FROM receipts WHERE payment_id = $1', [payment.id]);
    expect(receipts).toEqual([{ id: confirmations[0].receipt_id, source: 'confirm', url: 'https://shop.example/receipts/1.pdf', storage_key: null }]);

    // Verification started: the deadline is CONFIRM_VERIFY_SECONDS (default 1800) after the confirm.
    const { rows: deadline } = await service.ctx.db.query(
      `SELECT verify_until >= created_at + interval '1800 seconds' AS after_window FROM payments WHERE id = $1`,
      [payment.id],
    );
    expect(deadline[0].after_window).toBe(true);
  });

  it('confirm: an empty body (no content-type, no body) is valid, records a signal without a receipt', async () => {
    const payment = await w.newPayment();
    const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/confirm`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: payment.id, ext_id: payment.ext_id, status: 'PENDING', message: expect.any(String) });
    const { rows } = await service.ctx.db.query('SELECT receipt_id FROM payment_confirmations WHERE payment_id = $1', [payment.id]);
    expect(rows).toEqual([{ receipt_id: null }]);
    const { rows: receipts } = await service.ctx.db.query('SELECT 1 FROM receipts WHERE payment_id = $1', [payment.id]);
    expect(receipts).toHaveLength(0);

    // An empty JSON object is the same.
    const again = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/confirm`, {});
    expect(again.statusCode, again.body).toBe(200);
  });

  it('confirm: a receipt_url in the multipart `data` part is kept as the confirm receipt', async () => {
    const payment = await w.newPayment();
    const res = await signedMultipart(
      service.app,
      merchant,
      `/v1/payments/${payment.id}/confirm`,
      multipartBody({ data: JSON.stringify({ receipt_url: 'https://shop.example/from-data.pdf' }) }),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: payment.id, status: 'PENDING', message: expect.any(String) });
    const { rows } = await service.ctx.db.query(
      'SELECT r.source, r.url FROM payment_confirmations c JOIN receipts r ON r.id = c.receipt_id WHERE c.payment_id = $1',
      [payment.id],
    );
    expect(rows).toEqual([{ source: 'confirm', url: 'https://shop.example/from-data.pdf' }]);
  });

  it('confirm: a second confirm records a second signal but does not push verify_until back', async () => {
    const payment = await w.newPayment();
    expect((await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/confirm`)).statusCode).toBe(200);
    const first = (await w.row(payment.id)).verify_until as Date;
    expect(first).toBeInstanceOf(Date);
    // Let the clock move so a reset would be visible.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/confirm`, { receipt_url: 'https://shop.example/r2.png' })).statusCode).toBe(
      200,
    );
    const second = (await w.row(payment.id)).verify_until as Date;
    expect(second.getTime()).toBe(first.getTime());
    const { rows } = await service.ctx.db.query('SELECT count(*)::int AS n FROM payment_confirmations WHERE payment_id = $1', [payment.id]);
    expect(rows[0].n).toBe(2);
  });

  it('confirm: PAY_008 with data.status in every status but PENDING', async () => {
    for (const status of ALL_STATUSES.filter((s) => s !== 'PENDING')) {
      const payment = await w.paymentIn(status);
      const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/confirm`, { receipt_url: 'https://shop.example/x.pdf' });
      expect(res.statusCode, status).toBe(400);
      expect(res.json()).toMatchObject({ error: 'PAY_008', message: expect.any(String), data: { status } });
      expect(await w.statusOf(payment.id)).toBe(status);
      // A refused confirm leaves no signal or receipt behind.
      const { rows } = await service.ctx.db.query(
        `SELECT (SELECT count(*) FROM payment_confirmations WHERE payment_id = $1)::int AS c,
                (SELECT count(*) FROM receipts WHERE payment_id = $1 AND source = 'confirm')::int AS r`,
        [payment.id],
      );
      expect(rows[0]).toEqual({ c: 0, r: 0 });
    }
  });

  it("confirm: PAY_006 for an unknown id, another merchant's payment and a non-UUID", async () => {
    const mine = await w.newPayment();
    for (const [creds, id] of [
      [merchant, '00000000-0000-4000-8000-000000000000'],
      [merchant, 'not-a-uuid'],
      [other, mine.id],
    ] as const) {
      const res = await signed(service.app, creds, 'POST', `/v1/payments/${id}/confirm`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error).toBe('PAY_006');
    }
    expect((await w.row(mine.id)).verify_until).toBeNull();
  });
});

describe('POST /v1/payments/{id}/receipt', () => {
  it('receipt: accepted in PENDING, DISPUTE, CANCELLED and CANCELLED_APPEAL, status unchanged', async () => {
    for (const status of ['PENDING', 'DISPUTE', 'CANCELLED', 'CANCELLED_APPEAL'] as const) {
      const payment = await w.paymentIn(status);
      const link = `https://shop.example/receipts/${status.toLowerCase()}.pdf`;
      const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/receipt`, { receipt_url: link });
      expect(res.statusCode, `${status}: ${res.body}`).toBe(200);
      expect(res.json()).toEqual({ id: payment.id, ext_id: payment.ext_id, status, receipt_url: link });
      expect(await w.statusOf(payment.id)).toBe(status);
      const { rows } = await service.ctx.db.query('SELECT source, url FROM receipts WHERE payment_id = $1 AND source = $2', [payment.id, 'receipt']);
      expect(rows).toEqual([{ source: 'receipt', url: link }]);
    }
  });

  it('receipt: a stored file answers a path in the service storage', async () => {
    const payment = await w.paymentIn('CANCELLED');
    const res = await signedMultipart(service.app, merchant, `/v1/payments/${payment.id}/receipt`, multipartBody({}, { content: TINY_PNG }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      id: payment.id,
      ext_id: payment.ext_id,
      status: 'CANCELLED',
      receipt_url: expect.stringMatching(/^http:\/\/kassir\.test\/v1\/receipts\/[0-9a-f-]{36}$/),
    });
  });

  it('receipt: PAY_008 for completed payments, with data.status', async () => {
    for (const status of ['COMPLETED', 'COMPLETED_APPEAL'] as const) {
      const payment = await w.paymentIn(status);
      const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/receipt`, { receipt_url: 'https://shop.example/late.pdf' });
      expect(res.statusCode, status).toBe(400);
      expect(res.json()).toMatchObject({ error: 'PAY_008', data: { status } });
      const { rows } = await service.ctx.db.query(`SELECT 1 FROM receipts WHERE payment_id = $1 AND source = 'receipt'`, [payment.id]);
      expect(rows).toHaveLength(0);
    }
  });

  it('receipt: PAY_002 with neither file nor link, a bad link, or a bad JSON part', async () => {
    const payment = await w.newPayment();
    const url = `/v1/payments/${payment.id}/receipt`;
    for (const body of [undefined, {}, { receipt_url: '' }, { receipt_url: 'not a url' }, { receipt_url: 42 }, { comment: 'no receipt' }]) {
      const res = await signed(service.app, merchant, 'POST', url, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe('PAY_002');
    }
    // Multipart with a `data` part that is not JSON and no file.
    const bad = await signedMultipart(service.app, merchant, url, multipartBody({ data: '{not json' }));
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json().error).toBe('PAY_002');
    // Multipart with neither file nor receipt_url.
    const empty = await signedMultipart(service.app, merchant, url, multipartBody({ data: JSON.stringify({ comment: 'x' }) }));
    expect(empty.statusCode, empty.body).toBe(400);
    expect(empty.json().error).toBe('PAY_002');
    const { rows } = await service.ctx.db.query('SELECT 1 FROM receipts WHERE payment_id = $1', [payment.id]);
    expect(rows).toHaveLength(0);
  });

  it('receipt: PAY_006 for an unknown id and a non-UUID', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await signed(service.app, merchant, 'POST', `/v1/payments/${id}/receipt`, { receipt_url: 'https://shop.example/r.pdf' });
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error).toBe('PAY_006');
    }
  });

  it("receipt in DISPUTE: the dispute's first receipt is never overwritten", async () => {
    const A = 'https://shop.example/first-A.pdf';
    const B = 'https://shop.example/later-B.pdf';
    const C = 'https://shop.example/later-C.pdf';
    const card = async (paymentId: string) => {
      const { rows } = await service.ctx.db.query(`SELECT id FROM disputes WHERE payment_id = $1 AND status = 'open'`, [paymentId]);
      return adminOk<Json>(service.app, 'GET', `/disputes/${rows[0].id}`);
    };

    // Opened with a receipt: a later one does not replace it.
    const withReceipt = await w.paymentIn('CANCELLED');
    const opened = await signed(service.app, merchant, 'POST', `/v1/payments/${withReceipt.id}/dispute`, { receipt_url: A });
    expect(opened.statusCode, opened.body).toBe(200);
    expect(opened.json().dispute.receipt_url).toBe(A);
    expect((await signed(service.app, merchant, 'POST', `/v1/payments/${withReceipt.id}/receipt`, { receipt_url: B })).statusCode).toBe(200);
    let view = await card(withReceipt.id);
    expect(view.receipt.url).toBe(A);
    expect(view.receipts.map((r: Json) => r.url)).toEqual([A, B]);

    // Opened without one: the first later receipt goes onto the card, the next one does not.
    const without = await w.paymentIn('CANCELLED');
    const bare = await signed(service.app, merchant, 'POST', `/v1/payments/${without.id}/dispute`, { comment: 'paid, see receipt later' });
    expect(bare.statusCode, bare.body).toBe(200);
    expect((await card(without.id)).receipt).toBeNull();
    expect((await signed(service.app, merchant, 'POST', `/v1/payments/${without.id}/receipt`, { receipt_url: B })).statusCode).toBe(200);
    expect((await card(without.id)).receipt.url).toBe(B);
    expect((await signed(service.app, merchant, 'POST', `/v1/payments/${without.id}/receipt`, { receipt_url: C })).statusCode).toBe(200);
    view = await card(without.id);
    expect(view.receipt.url).toBe(B);
    expect(view.receipts.map((r: Json) => r.url)).toEqual([B, C]);
  });
});

describe('POST /v1/payments/{id}/dispute', () => {
  it("dispute: opens from CANCELLED with the spec's response shape", async () => {
    const payment = await w.paymentIn('CANCELLED', { notify_url: 'http://127.0.0.1:9/hooks' });
    const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, {
      amount: 950.5,
      receipt_url: 'https://shop.example/proof.jpg',
      comment: 'payer sent 950.50',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      id: payment.id,
      ext_id: payment.ext_id,
      amount: payment.amount,
      currency: 'RUB',
      status: 'dispute',
      method: 'CARD',
      dispute: { amount: 950.5, receipt_url: 'https://shop.example/proof.jpg', comment: 'payer sent 950.50', created_at: expect.stringMatching(ISO) },
      created_at: payment.created_at,
    });
    expect(await w.statusOf(payment.id)).toBe('DISPUTE');
    // Elsewhere the status is upper case (decision 5).
    expect((await signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`)).json().status).toBe('DISPUTE');
    const { rows } = await service.ctx.db.query('SELECT status, amount::text, comment FROM disputes WHERE payment_id = $1', [payment.id]);
    expect(rows).toEqual([{ status: 'open', amount: '950.50', comment: 'payer sent 950.50' }]);
    const { rows: events } = await service.ctx.db.query('SELECT event FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id]);
    expect(events.map((e) => e.event)).toEqual(['payment.cancelled', 'payment.dispute']);
  });

  it('dispute: without parameters, amount is null', async () => {
    const payment = await w.paymentIn('CANCELLED');
    const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: payment.id, status: 'dispute', dispute: { amount: null, created_at: expect.stringMatching(ISO) } });
    expect(Object.keys(res.json()).sort()).toEqual(['amount', 'created_at', 'currency', 'dispute', 'ext_id', 'id', 'method', 'status']);
    expect(Object.keys(res.json().dispute).sort()).toEqual(['amount', 'comment', 'created_at', 'receipt_url']);
  });

  it('dispute: DIS_001 for PENDING, COMPLETED and COMPLETED_APPEAL', async () => {
    for (const status of ['PENDING', 'COMPLETED', 'COMPLETED_APPEAL'] as const) {
      const payment = await w.paymentIn(status);
      const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, { comment: 'please' });
      expect(res.statusCode, status).toBe(400);
      expect(res.json().error).toBe('DIS_001');
      expect(await w.statusOf(payment.id)).toBe(status);
    }
  });

  it('dispute: DIS_002 (409) when the payment is already in dispute', async () => {
    const payment = await w.paymentIn('DISPUTE');
    const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, { comment: 'again' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('DIS_002');
    const { rows } = await service.ctx.db.query('SELECT count(*)::int AS n FROM disputes WHERE payment_id = $1', [payment.id]);
    expect(rows[0].n).toBe(1);
  });

  it('dispute: PAY_002 for a bad amount, the payment stays CANCELLED', async () => {
    const payment = await w.paymentIn('CANCELLED');
    for (const amount of [-5, 0, '900', 900.123, true]) {
      const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, { amount });
      expect(res.statusCode, JSON.stringify(amount)).toBe(400);
      expect(res.json().error).toBe('PAY_002');
    }
    expect(await w.statusOf(payment.id)).toBe('CANCELLED');
    const { rows } = await service.ctx.db.query('SELECT 1 FROM disputes WHERE payment_id = $1', [payment.id]);
    expect(rows).toHaveLength(0);
  });

  it("dispute: PAY_006 for an unknown id, a non-UUID and another merchant's payment", async () => {
    const mine = await w.paymentIn('CANCELLED');
    for (const [creds, id] of [
      [merchant, '00000000-0000-4000-8000-000000000000'],
      [merchant, 'not-a-uuid'],
      [other, mine.id],
    ] as const) {
      const res = await signed(service.app, creds, 'POST', `/v1/payments/${id}/dispute`, {});
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error).toBe('PAY_006');
    }
    expect(await w.statusOf(mine.id)).toBe('CANCELLED');
  });

  it('dispute: re-opening after a cancel (CANCELLED_APPEAL → DISPUTE) creates a new dispute', async () => {
    const payment = await w.paymentIn('CANCELLED_APPEAL');
    const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, { comment: 'second try' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'dispute', dispute: { comment: 'second try' } });
    expect(await w.statusOf(payment.id)).toBe('DISPUTE');
    const { rows } = await service.ctx.db.query('SELECT status, comment FROM disputes WHERE payment_id = $1 ORDER BY created_at', [payment.id]);
    expect(rows).toEqual([
      { status: 'cancelled', comment: null },
      { status: 'open', comment: 'second try' },
    ]);
  });
});

describe('POST /v1/payments/{id}/dispute/cancel', () => {
  it('dispute/cancel: DISPUTE → CANCELLED_APPEAL', async () => {
    const payment = await w.paymentIn('DISPUTE', { notify_url: 'http://127.0.0.1:9/hooks' });
    const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute/cancel`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ id: payment.id, ext_id: payment.ext_id, status: 'cancelled_appeal' });
    expect(await w.statusOf(payment.id)).toBe('CANCELLED_APPEAL');
    const { rows } = await service.ctx.db.query('SELECT status, decided_by FROM disputes WHERE payment_id = $1', [payment.id]);
    expect(rows).toEqual([{ status: 'cancelled', decided_by: 'merchant' }]);
    const { rows: events } = await service.ctx.db.query('SELECT event FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id]);
    expect(events.map((e) => e.event)).toEqual(['payment.cancelled', 'payment.dispute', 'payment.cancelled_appeal']);
  });

  it('dispute/cancel: DIS_003 from every status but DISPUTE', async () => {
    for (const status of ALL_STATUSES.filter((s) => s !== 'DISPUTE')) {
      const payment = await w.paymentIn(status);
      const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute/cancel`);
      expect(res.statusCode, status).toBe(400);
      expect(res.json().error).toBe('DIS_003');
      expect(await w.statusOf(payment.id)).toBe(status);
    }
  });

  it("dispute/cancel: PAY_006 for an unknown id, a non-UUID and another merchant's payment", async () => {
    const mine = await w.paymentIn('DISPUTE');
    for (const [creds, id] of [
      [merchant, '00000000-0000-4000-8000-000000000000'],
      [merchant, 'xyz'],
      [other, mine.id],
    ] as const) {
      const res = await signed(service.app, creds, 'POST', `/v1/payments/${id}/dispute/cancel`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error).toBe('PAY_006');
    }
    expect(await w.statusOf(mine.id)).toBe('DISPUTE');
  });
});

describe('operator review', () => {
  it('lists open disputes with the payment, receipts, confirm signals and executor notifications', async () => {
    const payment = await w.newPayment();
    expect((await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/confirm`, { receipt_url: 'https://shop.example/c.pdf' })).statusCode).toBe(
      200,
    );
    await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
    const opened = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, {
      amount: payment.amount,
      receipt_url: 'https://shop.example/d.pdf',
      comment: 'paid',
    });
    expect(opened.statusCode, opened.body).toBe(200);
    // The executor's side: a transfer on that requisite for that amount that matched nothing.
    const notification = await w.notify(payment.id);
    expect(notification.matched).toBe(false);

    const list = await adminOk<{ disputes: Json[] }>(service.app, 'GET', '/disputes');
    expect(list.disputes.every((d) => d.status === 'open')).toBe(true);
    const card = list.disputes.find((d) => d.payment.id === payment.id)!;
    expect(card).toBeDefined();
    expect(card).toMatchObject({
      status: 'open',
      amount: payment.amount,
      comment: 'paid',
      receipt: { url: 'https://shop.example/d.pdf' },
      payment: { id: payment.id, ext_id: payment.ext_id, status: 'DISPUTE', amount: payment.amount },
    });
    expect(card.receipts.map((r: Json) => [r.source, r.url])).toEqual([
      ['confirm', 'https://shop.example/c.pdf'],
      ['dispute', 'https://shop.example/d.pdf'],
    ]);
    expect(card.confirmations).toHaveLength(1);
    expect(card.confirmations[0]).toMatchObject({ source: 'merchant', receipt_id: card.receipts[0].id });
    expect(card.notifications.map((n: Json) => n.id)).toEqual([notification.notification_id]);
    expect(card.notifications[0].amount).toBe(payment.amount);

    const one = await adminOk<Json>(service.app, 'GET', `/disputes/${card.id}`);
    expect(one).toEqual(card);

    // Once decided it leaves the open list.
    await adminOk(service.app, 'POST', `/payments/${payment.id}/dispute/reject`);
    const after = await adminOk<{ disputes: Json[] }>(service.app, 'GET', '/disputes');
    expect(after.disputes.find((d) => d.payment.id === payment.id)).toBeUndefined();
    const rejected = await adminOk<{ disputes: Json[] }>(service.app, 'GET', '/disputes?status=rejected');
    expect(rejected.disputes.find((d) => d.payment.id === payment.id)).toMatchObject({ status: 'rejected', decided_by: expect.any(String) });
  });

  it('approve with the order amount → COMPLETED, credited amount / rate × (1 − payin_rate / 100), audited, webhook', async () => {
    const payment = await w.paymentIn('DISPUTE', { notify_url: 'http://127.0.0.1:9/hooks' });
    const res = await admin(service.app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: payment.amount });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: payment.id, status: 'COMPLETED' });
    expect(await w.statusOf(payment.id)).toBe('COMPLETED');
    expect(await w.payinCredits(payment.id)).toEqual([expectedCredit(payment.amount)]);
    const { rows: dispute } = await service.ctx.db.query('SELECT status, decided_amount::text FROM disputes WHERE payment_id = $1', [payment.id]);
    expect(dispute).toEqual([{ status: 'approved', decided_amount: new Decimal(payment.amount).toFixed(2) }]);

    const { rows: audit } = await service.ctx.db.query(`SELECT actor, action, before, after FROM audit_log WHERE object_id = $1 AND action LIKE 'dispute.%'`, [
      payment.id,
    ]);
    expect(audit).toEqual([
      {
        actor: 'token',
        action: 'dispute.approve',
        before: { status: 'DISPUTE' },
        after: expect.objectContaining({ status: 'COMPLETED' }),
      },
    ]);
    const { rows: events } = await service.ctx.db.query('SELECT event, payload FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id]);
    expect(events.map((e) => e.event)).toEqual(['payment.cancelled', 'payment.dispute', 'payment.completed']);
    expect(events[2].payload).toMatchObject({ id: payment.id, status: 'COMPLETED' });
  });

  it('approve with another amount → COMPLETED_APPEAL, credited for the received amount, audited, webhook', async () => {
    const payment = await w.paymentIn('DISPUTE', { notify_url: 'http://127.0.0.1:9/hooks' });
    const received = new Decimal(payment.amount).minus('123.45');
    const approved = await adminOk<Json>(service.app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: received.toNumber() });
    expect(approved).toMatchObject({ id: payment.id, status: 'COMPLETED_APPEAL', amount: payment.amount });
    expect(await w.payinCredits(payment.id)).toEqual([expectedCredit(received)]);
    const { rows } = await service.ctx.db.query('SELECT received_amount::text FROM payments WHERE id = $1', [payment.id]);
    expect(rows[0].received_amount).toBe(received.toFixed(2));

    const { rows: audit } = await service.ctx.db.query(`SELECT action, before, after FROM audit_log WHERE object_id = $1 AND action LIKE 'dispute.%'`, [
      payment.id,
    ]);
    expect(audit).toEqual([{ action: 'dispute.approve', before: { status: 'DISPUTE' }, after: { status: 'COMPLETED_APPEAL', amount: received.toNumber() } }]);
    const { rows: events } = await service.ctx.db.query('SELECT event FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id]);
    expect(events.map((e) => e.event)).toEqual(['payment.cancelled', 'payment.dispute', 'payment.completed_appeal']);

    // A higher amount than ordered is also "another amount".
    const more = await w.paymentIn('DISPUTE');
    const higher = await adminOk<Json>(service.app, 'POST', `/payments/${more.id}/dispute/approve`, { amount: more.amount + 10 });
    expect(higher.status).toBe('COMPLETED_APPEAL');
    expect(await w.payinCredits(more.id)).toEqual([expectedCredit(more.amount + 10)]);
  });

  it('reject → CANCELLED, and a new dispute can be opened again', async () => {
    const payment = await w.paymentIn('DISPUTE', { notify_url: 'http://127.0.0.1:9/hooks' });
    const rejected = await adminOk<Json>(service.app, 'POST', `/payments/${payment.id}/dispute/reject`);
    expect(rejected).toMatchObject({ id: payment.id, status: 'CANCELLED' });
    expect(await w.payinCount(payment.id)).toBe(0);
    const { rows: audit } = await service.ctx.db.query(`SELECT actor, action, before, after FROM audit_log WHERE object_id = $1 AND action LIKE 'dispute.%'`, [
      payment.id,
    ]);
    expect(audit).toEqual([{ actor: 'token', action: 'dispute.reject', before: { status: 'DISPUTE' }, after: { status: 'CANCELLED' } }]);

    // Spec: CANCELLED → DISPUTE.
    const reopened = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, { comment: 'new evidence' });
    expect(reopened.statusCode, reopened.body).toBe(200);
    expect(reopened.json().status).toBe('dispute');
    const { rows } = await service.ctx.db.query('SELECT status FROM disputes WHERE payment_id = $1 ORDER BY created_at', [payment.id]);
    expect(rows.map((r) => r.status)).toEqual(['rejected', 'open']);
    const { rows: events } = await service.ctx.db.query('SELECT event FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id]);
    expect(events.map((e) => e.event)).toEqual(['payment.cancelled', 'payment.dispute', 'payment.cancelled', 'payment.dispute']);
  });

  it('approve/reject of a payment not in DISPUTE → 400 DIS_003, nothing written', async () => {
    for (const status of ALL_STATUSES.filter((s) => s !== 'DISPUTE')) {
      const payment = await w.paymentIn(status);
      const credits = await w.payinCount(payment.id);
      for (const [path, body] of [
        ['approve', { amount: payment.amount }],
        ['reject', undefined],
      ] as const) {
        const res = await admin(service.app, 'POST', `/payments/${payment.id}/dispute/${path}`, body);
        expect(res.statusCode, `${path} ${status}`).toBe(400);
        expect(res.json().error).toBe('DIS_003');
      }
      expect(await w.statusOf(payment.id)).toBe(status);
      expect(await w.payinCount(payment.id)).toBe(credits);
    }
    const unknown = await admin(service.app, 'POST', '/payments/00000000-0000-4000-8000-000000000000/dispute/reject');
    expect(unknown.statusCode).toBe(404);
  });
});

describe('decision 7', () => {
  it('a completed payment (either kind) accepts no dispute, confirm or receipt', async () => {
    for (const status of ['COMPLETED', 'COMPLETED_APPEAL'] as const) {
      const payment = await w.paymentIn(status);
      const dispute = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, { amount: 1 });
      expect([dispute.statusCode, dispute.json().error]).toEqual([400, 'DIS_001']);
      const confirm = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/confirm`);
      expect([confirm.statusCode, confirm.json().error, confirm.json().data?.status]).toEqual([400, 'PAY_008', status]);
      const receipt = await signedMultipart(service.app, merchant, `/v1/payments/${payment.id}/receipt`, multipartBody({}, { content: TINY_PNG }));
      expect([receipt.statusCode, receipt.json().error, receipt.json().data?.status]).toEqual([400, 'PAY_008', status]);
      const cancel = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute/cancel`);
      expect([cancel.statusCode, cancel.json().error]).toEqual([400, 'DIS_003']);
      expect(await w.statusOf(payment.id)).toBe(status);
      expect(await w.payinCount(payment.id)).toBe(1);
    }
  });
});

describe('isolation', () => {
  it('another merchant cannot confirm, attach a receipt, open or cancel a dispute on a payment, nor download its receipt', async () => {
    const pending = await w.paymentIn('PENDING');
    const cancelled = await w.paymentIn('CANCELLED');
    const disputed = await w.paymentIn('DISPUTE');
    const stored = await signedMultipart(service.app, merchant, `/v1/payments/${cancelled.id}/receipt`, multipartBody({}, { content: TINY_PNG }));
    expect(stored.statusCode, stored.body).toBe(200);
    const receiptPath = new URL(stored.json().receipt_url).pathname;

    const attempts: [string, unknown][] = [
      [`/v1/payments/${pending.id}/confirm`, undefined],
      [`/v1/payments/${pending.id}/receipt`, { receipt_url: 'https://evil.example/r.pdf' }],
      [`/v1/payments/${disputed.id}/receipt`, { receipt_url: 'https://evil.example/r.pdf' }],
      [`/v1/payments/${cancelled.id}/dispute`, { comment: 'mine now' }],
      [`/v1/payments/${disputed.id}/dispute/cancel`, undefined],
    ];
    for (const [url, body] of attempts) {
      const res = await signed(service.app, other, 'POST', url, body);
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error).toBe('PAY_006');
    }
    const upload = await signedMultipart(service.app, other, `/v1/payments/${pending.id}/receipt`, multipartBody({}, { content: TINY_PNG }));
    expect([upload.statusCode, upload.json().error]).toEqual([404, 'PAY_006']);

    const theirs = await signed(service.app, other, 'GET', receiptPath);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.body).not.toContain('PNG');
    const ours = await signed(service.app, merchant, 'GET', receiptPath);
    expect(ours.statusCode).toBe(200);
    expect(Buffer.compare(ours.rawPayload, TINY_PNG)).toBe(0);
    // The operator sees every merchant's receipts.
    const operator = await admin(service.app, 'GET', `/receipts/${receiptPath.split('/').pop()}`);
    expect(operator.statusCode).toBe(200);
    expect(operator.headers['content-disposition']).toMatch(/^attachment/);
    expect(operator.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.compare(operator.rawPayload, TINY_PNG)).toBe(0);

    // Nothing changed on merchant A's side.
    expect(await w.statusOf(pending.id)).toBe('PENDING');
    expect(await w.statusOf(cancelled.id)).toBe('CANCELLED');
    expect(await w.statusOf(disputed.id)).toBe('DISPUTE');
    const { rows } = await service.ctx.db.query(
      `SELECT (SELECT count(*) FROM payment_confirmations WHERE payment_id = $1)::int AS confirmations,
              (SELECT count(*) FROM receipts WHERE payment_id = ANY($2::uuid[]) AND url LIKE 'https://evil.example/%')::int AS receipts`,
      [pending.id, [pending.id, disputed.id]],
    );
    expect(rows[0]).toEqual({ confirmations: 0, receipts: 0 });
  });
});

describe('races over two instances', () => {
  let second: RunningService;
  beforeAll(async () => {
    second = await service.startAnother();
  });

  it('race: approve against cancel, 20 times: exactly one wins, credit posted at most once', async () => {
    const outcomes = { approved: 0, cancelled: 0 };
    for (let i = 0; i < 20; i++) {
      const payment = await w.paymentIn('DISPUTE');
      // Alternate which instance takes which side, so neither always starts first.
      const [approveApp, cancelApp] = i % 2 === 0 ? [service.app, second.app] : [second.app, service.app];
      const [approve, cancel] = await Promise.all([
        admin(approveApp, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: payment.amount }),
        signed(cancelApp, merchant, 'POST', `/v1/payments/${payment.id}/dispute/cancel`),
      ]);
      const status = await w.statusOf(payment.id);
      const { rows: disputes } = await service.ctx.db.query('SELECT status FROM disputes WHERE payment_id = $1', [payment.id]);
      if (approve.statusCode === 200) {
        outcomes.approved++;
        expect([cancel.statusCode, cancel.json().error]).toEqual([400, 'DIS_003']);
        expect(status).toBe('COMPLETED');
        expect(await w.payinCredits(payment.id)).toEqual([expectedCredit(payment.amount)]);
        expect(disputes).toEqual([{ status: 'approved' }]);
      } else {
        outcomes.cancelled++;
        expect([approve.statusCode, approve.json().error], approve.body).toEqual([400, 'DIS_003']);
        expect(cancel.statusCode, cancel.body).toBe(200);
        expect(cancel.json().status).toBe('cancelled_appeal');
        expect(status).toBe('CANCELLED_APPEAL');
        expect(await w.payinCount(payment.id)).toBe(0);
        expect(disputes).toEqual([{ status: 'cancelled' }]);
      }
    }
    expect(outcomes.approved + outcomes.cancelled).toBe(20);
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('race: two approvals at once (one per instance) credit once', async () => {
    for (let i = 0; i < 5; i++) {
      const payment = await w.paymentIn('DISPUTE');
      const results = await Promise.all([
        admin(service.app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: payment.amount }),
        admin(second.app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: payment.amount - 1 }),
      ]);
      const codes = results.map((r) => r.statusCode).sort();
      expect(codes).toEqual([200, 400]);
      expect(results.find((r) => r.statusCode === 400)!.json().error).toBe('DIS_003');
      expect(['COMPLETED', 'COMPLETED_APPEAL']).toContain(await w.statusOf(payment.id));
      expect(await w.payinCount(payment.id)).toBe(1);
      const { rows } = await service.ctx.db.query('SELECT count(*)::int AS n FROM audit_log WHERE object_id = $1 AND action = $2', [
        payment.id,
        'dispute.approve',
      ]);
      expect(rows[0].n).toBe(1);
    }
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});

describe('ledger after everything', () => {
  it('GET /admin/v1/ledger/check is ok', async () => {
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});

/**
 * A service with the worker on, and two payments on it: one the merchant confirmed, one not. The
 * caller closes `svc`.
 */
async function confirmedAndUnconfirmed(env: Record<string, string>) {
  const svc = await startTestService(env, { worker: true });
  try {
    await setRate(svc.app, 'RUB', Number(RATE));
    const m = await createMerchant(svc.app, { payin_rate: Number(PAYIN_RATE) });
    const ex = await createExecutor(svc.app);
    for (let i = 0; i < 2; i++) await createRequisite(svc.app, ex.id);
    const v = world(() => ({ app: svc.app, service: svc, merchant: m, executor: ex }));
    const confirmed = await v.newPayment();
    const unconfirmed = await v.newPayment();
    expect((await signed(svc.app, m, 'POST', `/v1/payments/${confirmed.id}/confirm`)).statusCode).toBe(200);
    return { svc, v, confirmed, unconfirmed };
  } catch (err) {
    await svc.close();
    throw err;
  }
}

describe('verification after confirm (worker on)', () => {
  it('verification: a confirmed payment without a notification is CANCELLED (transfer_not_found); an unconfirmed one is untouched', async () => {
    const { svc, v, confirmed, unconfirmed } = await confirmedAndUnconfirmed({ CONFIRM_VERIFY_SECONDS: '1', KASSIR_EXPIRY_SWEEP_SECONDS: '1' });
    try {
      const cancelled = await until(
        async () => {
          const r = await v.row(confirmed.id);
          return r.status === 'PENDING' ? undefined : r;
        },
        20_000,
        200,
      );
      expect(cancelled).toMatchObject({ status: 'CANCELLED', cancel_reason: 'transfer_not_found' });
      // Not before the verification deadline, and well before valid_until.
      const { rows } = await svc.ctx.db.query('SELECT updated_at >= verify_until AS on_time, updated_at < valid_until AS early FROM payments WHERE id = $1', [
        confirmed.id,
      ]);
      expect(rows[0]).toEqual({ on_time: true, early: true });
      expect(await v.statusOf(unconfirmed.id)).toBe('PENDING');
      expect(await v.payinCount(confirmed.id)).toBe(0);
    } finally {
      await svc.close();
    }
  });

  it('verification: a confirmed payment stays PENDING past valid_until while an unconfirmed one expires; its notification completes it', async () => {
    const { svc, v, confirmed, unconfirmed } = await confirmedAndUnconfirmed({
      CONFIRM_VERIFY_SECONDS: '3600',
      PAYMENT_TTL_SECONDS: '2',
      KASSIR_EXPIRY_SWEEP_SECONDS: '1',
    });
    try {
      const expired = await until(
        async () => {
          const r = await v.row(unconfirmed.id);
          return r.status === 'PENDING' ? undefined : r;
        },
        20_000,
        200,
      );
      expect(expired).toMatchObject({ status: 'CANCELLED', cancel_reason: 'expired' });
      // The sweep has run past the confirmed payment's valid_until; give it one more round.
      await until(
        async () => {
          const { rows } = await svc.ctx.db.query("SELECT now() > valid_until + interval '2 seconds' AS past FROM payments WHERE id = $1", [confirmed.id]);
          return rows[0].past ? true : undefined;
        },
        20_000,
        200,
      );
      expect(await v.statusOf(confirmed.id)).toBe('PENDING');

      // The transfer arrives within the verification window: COMPLETED and credited.
      const notification = await v.notify(confirmed.id);
      expect(notification).toMatchObject({ matched: true, payment_id: confirmed.id });
      expect(await v.statusOf(confirmed.id)).toBe('COMPLETED');
      expect(await v.payinCredits(confirmed.id)).toEqual([expectedCredit(confirmed.amount)]);
      expect(await adminOk(svc.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
    } finally {
      await svc.close();
    }
  });
});
