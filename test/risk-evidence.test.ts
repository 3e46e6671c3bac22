/*
 * Evidence checks (issue 36 item 4): a receipt file whose content was already used for another
 * payment (any merchant's), a bank reference already named for another payment, and a payer name
 * in the bank message that is not the one the merchant sent each flag the payment or dispute for
 * a person — and never decide: no status changes because of a flag, and the merchant's answers
 * say nothing of it. A person settles a flag (audited, idempotent).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  executorCall,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  signedMultipart,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
} from './helpers.js';

type Json = Record<string, any>;

let service: TestService;
let merchantA: MerchantCredentials;
let merchantB: MerchantCredentials;
let executor: { id: string; token: string };
let nextAmount = 4100;

/** A PNG no other test sent: the tiny image with its own trailing bytes (judged by content, still a PNG). */
function freshPng(): Buffer {
  return Buffer.concat([TINY_PNG, randomBytes(24)]);
}

async function pay(creds: MerchantCredentials, extra: Record<string, unknown> = {}): Promise<Json> {
  const created = await createPayment(service.app, creds, { ext_id: uniqueExtId('order'), amount: nextAmount++, ...extra });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body;
}

async function confirmWith(creds: MerchantCredentials, paymentId: string, file: Buffer) {
  const res = await signedMultipart(service.app, creds, `/v1/payments/${paymentId}/confirm`, multipartBody({}, { content: file, contentType: 'image/png' }));
  expect(res.statusCode, res.body).toBe(200);
  return res;
}

async function hitsOn(paymentId: string): Promise<Json[]> {
  const { rows } = await service.ctx.db.query('SELECT * FROM risk_hits WHERE payment_id = $1 ORDER BY created_at', [paymentId]);
  return rows;
}

async function statusOf(paymentId: string): Promise<string> {
  const { rows } = await service.ctx.db.query<{ status: string }>('SELECT status FROM payments WHERE id = $1', [paymentId]);
  return rows[0]!.status;
}

/** A payment cancelled by the operator, then disputed by its merchant with `file` as the proof. */
async function disputedWith(creds: MerchantCredentials, file: Buffer): Promise<{ payment: Json; disputeId: string }> {
  const payment = await pay(creds);
  await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
  const opened = await signedMultipart(
    service.app,
    creds,
    `/v1/payments/${payment.id}/dispute`,
    multipartBody({ data: JSON.stringify({ comment: 'the payer says it was paid' }) }, { content: file, contentType: 'image/png' }),
  );
  expect(opened.statusCode, opened.body).toBe(200);
  const { rows } = await service.ctx.db.query<{ id: string }>(`SELECT id FROM disputes WHERE payment_id = $1 AND status = 'open'`, [payment.id]);
  return { payment, disputeId: rows[0]!.id };
}

/** The executor's bank message (its companion app) on the payment's requisite, with `text` naming the amount. */
async function bankMessage(payment: Json, text: string): Promise<Json> {
  const { rows } = await service.ctx.db.query<{ requisite_id: string }>('SELECT requisite_id FROM payments WHERE id = $1', [payment.id]);
  const res = await executorCall(service.app, executor.token, 'POST', '/notifications', {
    requisite_id: rows[0]!.requisite_id,
    text,
    received_at: new Date().toISOString(),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 95);
  merchantA = await createMerchant(service.app);
  merchantB = await createMerchant(service.app);
  executor = await createExecutor(service.app, 'Evidence');
  for (let i = 0; i < 6; i++) await createRequisite(service.app, executor.id);
});

afterAll(async () => {
  await service?.close();
});

describe('a reused receipt', () => {
  it('flags the second payment across merchants (not the first), changes no status, and the merchant’s answers are the same with or without the flag', async () => {
    const file = freshPng();
    const first = await pay(merchantA);
    await confirmWith(merchantA, first.id, file);
    expect(await hitsOn(first.id)).toEqual([]);

    const second = await pay(merchantB);
    const confirmed = await confirmWith(merchantB, second.id, file);
    const hits = await hitsOn(second.id);
    expect(hits).toHaveLength(1);
    const sha = (await service.ctx.db.query<{ hex: string }>("SELECT encode(sha256, 'hex') AS hex FROM receipts WHERE payment_id = $1", [first.id])).rows[0]!
      .hex;
    expect(hits[0]).toMatchObject({
      rule: 'receipt_reused',
      action: 'flagged',
      merchant_id: second.merchant_id ?? expect.any(String),
      dispute_id: null,
      settled_at: null,
      inputs: { sha256: sha.slice(0, 12), first_payment_id: first.id, same_merchant: false },
    });
    expect(hits[0]!.figure).toMatch(
      new RegExp(`^receipt sha256 ${sha.slice(0, 12)}… already used for payment ${first.id} \\(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\)$`),
    );
    expect(await statusOf(first.id)).toBe('PENDING');
    expect(await statusOf(second.id)).toBe('PENDING');

    // The operator's card shows it; the merchant's answers never do, and are the same without it.
    const card = await adminOk<Json>(service.app, 'GET', `/payments/${second.id}`);
    expect(card.risk_flags).toMatchObject([{ id: hits[0]!.id, rule: 'receipt_reused', settled_at: null }]);
    expect((await adminOk<Json>(service.app, 'GET', `/payments/${first.id}`)).risk_flags).toEqual([]);
    expect(confirmed.body).not.toMatch(/risk_flags|receipt_reused|reference_reused|payer_name|flagged/);
    const flagged = await signed(service.app, merchantB, 'GET', `/v1/payments/${second.id}`);
    expect(flagged.body).not.toMatch(/risk_flags|receipt_reused|reference_reused|payer_name|flagged/);
    await service.ctx.db.query('DELETE FROM risk_hits WHERE payment_id = $1', [second.id]);
    const clean = await signed(service.app, merchantB, 'GET', `/v1/payments/${second.id}`);
    expect([clean.statusCode, clean.json()]).toEqual([flagged.statusCode, flagged.json()]);
  });

  it('flags the dispute whose proof was already used, which the dispute card lists and ?flagged=true filters; a fresh proof is not flagged', async () => {
    const file = freshPng();
    const earlier = await pay(merchantB);
    await confirmWith(merchantB, earlier.id, file);

    const reused = await disputedWith(merchantA, file);
    const fresh = await disputedWith(merchantA, freshPng());
    const hits = await hitsOn(reused.payment.id);
    expect(hits).toMatchObject([{ rule: 'receipt_reused', dispute_id: reused.disputeId, inputs: { first_payment_id: earlier.id, what: 'dispute proof' } }]);
    expect(await hitsOn(fresh.payment.id)).toEqual([]);
    expect(await statusOf(reused.payment.id)).toBe('DISPUTE');

    const card = await adminOk<Json>(service.app, 'GET', `/disputes/${reused.disputeId}`);
    expect(card.risk_flags).toHaveLength(1);
    expect(card.risk_flags[0]).toMatchObject({ id: hits[0]!.id, rule: 'receipt_reused', dispute_id: reused.disputeId, settled_at: null });
    expect(card.risk_flags[0].figure).toContain(`already used for payment ${earlier.id}`);
    expect((await adminOk<Json>(service.app, 'GET', `/disputes/${fresh.disputeId}`)).risk_flags).toEqual([]);

    const ids = async (query: string) => (await adminOk<Json>(service.app, 'GET', `/disputes?limit=500${query}`)).disputes.map((d: Json) => d.id);
    expect(await ids('&flagged=true')).toContain(reused.disputeId);
    expect(await ids('&flagged=true')).not.toContain(fresh.disputeId);
    expect(await ids('&flagged=false')).toContain(fresh.disputeId);
    expect(await ids('&flagged=false')).not.toContain(reused.disputeId);
    expect((await admin(service.app, 'GET', '/disputes?flagged=maybe')).statusCode).toBe(400);

    // The merchant's dispute answer is the one it always was.
    const merchantView = await signed(service.app, merchantA, 'GET', `/v1/payments/${reused.payment.id}`);
    expect(merchantView.body).not.toMatch(/risk_flags|receipt_reused|reference_reused|payer_name|flagged/);
  });

  it('flags the dispute when the executor contests with a file already used for another payment', async () => {
    const file = freshPng();
    const earlier = await pay(merchantB);
    await confirmWith(merchantB, earlier.id, file);
    const { payment, disputeId } = await disputedWith(merchantA, freshPng());
    const body = multipartBody({ comment: 'nothing came' }, { field: 'file', name: 'history.png', contentType: 'image/png', content: file });
    const res = await service.app.inject({
      method: 'POST',
      url: `/executor/v1/disputes/${disputeId}/contest`,
      headers: { authorization: `Bearer ${executor.token}`, 'content-type': body.contentType },
      payload: body.body,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toMatch(/risk_flags|receipt_reused|reference_reused|payer_name|flagged/);
    expect(await hitsOn(payment.id)).toMatchObject([
      { rule: 'receipt_reused', dispute_id: disputeId, inputs: { what: 'executor contest file', first_payment_id: earlier.id } },
    ]);
  });

  it('two payments sending one new file at the same moment: exactly one of them is flagged', async () => {
    for (let round = 0; round < 3; round++) {
      const file = freshPng();
      const [p1, p2] = await Promise.all([pay(merchantA), pay(merchantB)]);
      await Promise.all([confirmWith(merchantA, p1!.id, file), confirmWith(merchantB, p2!.id, file)]);
      const flagged = [...(await hitsOn(p1!.id)), ...(await hitsOn(p2!.id))];
      expect(flagged, `round ${round}`).toHaveLength(1);
    }
  });
});

describe('a reused bank reference', () => {
  it('flags the second payment a message with the same reference completes; both stay completed', async () => {
    const reference = String(700000 + Math.floor(Math.random() * 99999));
    const first = await pay(merchantA);
    const second = await pay(merchantB);
    const one = await bankMessage(first, `Перевод по СБП +${first.amount} ₽. Номер операции ${reference}`);
    expect(one).toMatchObject({ matched: true, payment_id: first.id });
    const two = await bankMessage(second, `Зачисление ${second.amount} р. Код операции: ${reference}`);
    expect(two).toMatchObject({ matched: true, payment_id: second.id });
    expect(two).not.toHaveProperty('risk_flags');

    expect(await hitsOn(first.id)).toEqual([]);
    const hits = await hitsOn(second.id);
    expect(hits).toMatchObject([{ rule: 'reference_reused', action: 'flagged', inputs: { reference, first_payment_id: first.id } }]);
    expect(hits[0]!.figure).toContain(`bank reference ${reference} already used for payment ${first.id}`);
    expect([await statusOf(first.id), await statusOf(second.id)]).toEqual(['COMPLETED', 'COMPLETED']);
    const { rows } = await service.ctx.db.query('SELECT reference FROM notifications WHERE id = $1', [two.notification_id]);
    expect(rows[0]).toEqual({ reference });
  });
});

describe('a payer name that does not match', () => {
  it('flags a name other than the merchant’s; a match in Latin or Cyrillic, or no name sent, does not; the create answer is unchanged', async () => {
    const named = await pay(merchantA, { payer_name: 'Иван Иванов' });
    const plain = await pay(merchantA);
    expect(Object.keys(named).sort()).toEqual(Object.keys(plain).sort());
    expect(JSON.stringify(named)).not.toContain('Иван');

    await bankMessage(named, `Перевод по СБП от Пётр С. +${named.amount} ₽`);
    const hits = await hitsOn(named.id);
    expect(hits).toMatchObject([{ rule: 'payer_name', action: 'flagged', inputs: { bank_name: 'Пётр С.', merchant_name: 'Иван Иванов' } }]);
    expect(hits[0]!.figure).toBe("payer name 'Пётр С.' in the bank message ≠ 'Иван Иванов' sent by the merchant");
    expect(await statusOf(named.id)).toBe('COMPLETED');
    expect((await adminOk<Json>(service.app, 'GET', `/payments/${named.id}`)).payer_name).toBe('Иван Иванов');

    const latin = await pay(merchantB, { payer_name: 'Ivan Ivanov' });
    await bankMessage(latin, `Перевод по СБП от Иван И. +${latin.amount} ₽`);
    expect(await hitsOn(latin.id)).toEqual([]);

    const cyrillic = await pay(merchantB, { payer_name: 'Pyotr Sidorov' });
    await bankMessage(cyrillic, `Зачисление ${cyrillic.amount} р. Отправитель: ПЁТР СЕРГЕЕВИЧ С. Баланс 10000 р`);
    expect(await hitsOn(cyrillic.id)).toEqual([]);

    await bankMessage(plain, `Перевод по СБП от Пётр С. +${plain.amount} ₽`);
    expect(await hitsOn(plain.id)).toEqual([]);
    expect(await statusOf(plain.id)).toBe('COMPLETED');
  });
});

describe('settling a flag', () => {
  it('records who and why, audited once; settling again answers the settled flag; the dispute leaves ?flagged=true; nothing else changes', async () => {
    const file = freshPng();
    const earlier = await pay(merchantA);
    await confirmWith(merchantA, earlier.id, file);
    const { payment, disputeId } = await disputedWith(merchantB, file);
    const [hit] = await hitsOn(payment.id);
    expect(hit).toBeDefined();

    const settled = await admin(service.app, 'POST', `/risk/hits/${hit!.id}/settle`, { comment: 'same payer, a second order' });
    expect(settled.statusCode, settled.body).toBe(200);
    expect(settled.json()).toMatchObject({ id: hit!.id, rule: 'receipt_reused', settled_by: expect.any(String), settle_comment: 'same payer, a second order' });
    expect(settled.json().settled_at).not.toBeNull();

    const again = await admin(service.app, 'POST', `/risk/hits/${hit!.id}/settle`, { comment: 'another word' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(settled.json());

    const { rows: audits } = await service.ctx.db.query(`SELECT action, after FROM audit_log WHERE object_type = 'risk_hit' AND object_id = $1`, [hit!.id]);
    expect(audits).toMatchObject([{ action: 'risk.flag_settle', after: { comment: 'same payer, a second order' } }]);

    const flaggedIds = (await adminOk<Json>(service.app, 'GET', '/disputes?limit=500&flagged=true')).disputes.map((d: Json) => d.id);
    expect(flaggedIds).not.toContain(disputeId);
    const card = await adminOk<Json>(service.app, 'GET', `/disputes/${disputeId}`);
    expect(card.risk_flags[0]).toMatchObject({ id: hit!.id, settled_by: settled.json().settled_by });
    expect(await statusOf(payment.id)).toBe('DISPUTE');

    expect((await admin(service.app, 'POST', '/risk/hits/00000000-0000-4000-8000-000000000000/settle', {})).statusCode).toBe(404);
    expect((await admin(service.app, 'POST', '/risk/hits/not-a-uuid/settle')).statusCode).toBe(404);
  });

  it('two people settling one flag at once: one audit row, one answer', async () => {
    const file = freshPng();
    const earlier = await pay(merchantA);
    await confirmWith(merchantA, earlier.id, file);
    const later = await pay(merchantB);
    await confirmWith(merchantB, later.id, file);
    const [hit] = await hitsOn(later.id);
    const answers = await Promise.all([1, 2, 3].map((n) => admin(service.app, 'POST', `/risk/hits/${hit!.id}/settle`, { comment: `look ${n}` })));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    const { rows } = await service.ctx.db.query(`SELECT 1 FROM audit_log WHERE object_type = 'risk_hit' AND object_id = $1`, [hit!.id]);
    expect(rows).toHaveLength(1);
  });
});

describe('a reused payout proof', () => {
  /** A funded terminal's payout (POST /v1/payouts), taken by the evidence executor. */
  async function takenPayout(creds: MerchantCredentials): Promise<Json> {
    const created = await signed(service.app, creds, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId('po'),
      amount: 1500 + nextAmount++,
      method: 'card',
      requisites: '4111111111111111',
      holder_name: 'Ivan Petrov',
    });
    expect(created.statusCode, created.body).toBe(200);
    const take = await executorCall(service.app, executor.token, 'POST', `/payouts/${created.json().id}/take`);
    expect(take.statusCode, take.body).toBe(200);
    return created.json();
  }

  function completeWith(payoutId: string, file: Buffer) {
    const form = multipartBody({}, { field: 'proof', name: 'proof.png', content: file, contentType: 'image/png' });
    return service.app.inject({
      method: 'POST',
      url: `/executor/v1/payouts/${payoutId}/complete`,
      headers: { authorization: `Bearer ${executor.token}`, 'content-type': form.contentType },
      payload: form.body,
    });
  }

  async function hitsOnPayout(payoutId: string): Promise<Json[]> {
    const { rows } = await service.ctx.db.query('SELECT * FROM risk_hits WHERE payout_id = $1 ORDER BY created_at', [payoutId]);
    return rows;
  }

  beforeAll(async () => {
    for (const creds of [merchantA, merchantB]) {
      await adminOk(service.app, 'POST', `/terminals/${creds.terminalId}/adjustments`, { amount: 10_000, reason: 'payout proofs' });
    }
  });

  it('a proof already used for another payout (another merchant’s) flags the later payout, which stays completed; the merchant sees nothing of it', async () => {
    const file = freshPng();
    const sha = createHash('sha256').update(file).digest('hex');
    const first = await takenPayout(merchantA);
    const firstDone = await completeWith(first.id, file);
    expect(firstDone.statusCode, firstDone.body).toBe(200);
    expect(await hitsOnPayout(first.id)).toEqual([]);
    const { rows } = await service.ctx.db.query<{ hex: string }>("SELECT encode(proof_sha256, 'hex') AS hex FROM payouts WHERE id = $1", [first.id]);
    expect(rows[0]!.hex).toBe(sha);

    const second = await takenPayout(merchantB);
    const secondDone = await completeWith(second.id, file);
    expect(secondDone.statusCode, secondDone.body).toBe(200);
    expect(secondDone.json().status).toBe('completed');
    const hits = await hitsOnPayout(second.id);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({
      rule: 'receipt_reused',
      action: 'flagged',
      payment_id: null,
      payout_id: second.id,
      settled_at: null,
      inputs: {
        what: 'payout proof',
        sha256: sha.slice(0, 12),
        first_payout_id: first.id,
        first_source: 'payout_proof',
        same_merchant: false,
        same_executor: true,
      },
    });
    expect(hits[0]!.figure).toMatch(
      new RegExp(`^receipt sha256 ${sha.slice(0, 12)}… already used for payout ${first.id} \\(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\)$`),
    );

    // The operator's payout card shows the flag; the first payout's has none; the merchant's answer never does.
    expect((await adminOk<Json>(service.app, 'GET', `/payouts/${second.id}`)).risk_flags).toMatchObject([
      { id: hits[0]!.id, rule: 'receipt_reused', settled_at: null },
    ]);
    expect((await adminOk<Json>(service.app, 'GET', `/payouts/${first.id}`)).risk_flags).toEqual([]);
    const merchantView = await signed(service.app, merchantB, 'GET', `/v1/payouts/${second.id}`);
    expect(merchantView.statusCode).toBe(200);
    expect(merchantView.body).not.toMatch(/risk_flags|receipt_reused|flagged/);
    expect(secondDone.body).not.toMatch(/risk_flags|receipt_reused|flagged/);
  });

  it('a payment’s receipt shown as a payout proof flags the payout, naming the payment', async () => {
    const file = freshPng();
    const payment = await pay(merchantA);
    await confirmWith(merchantA, payment.id, file);
    const payout = await takenPayout(merchantA);
    expect((await completeWith(payout.id, file)).statusCode).toBe(200);
    const hits = await hitsOnPayout(payout.id);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ inputs: { first_payment_id: payment.id, first_payout_id: null, first_source: 'confirm', same_merchant: true } });
    expect(hits[0]!.figure).toContain(`already used for payment ${payment.id}`);
  });

  it('two payouts completed at once with one new file: exactly one of them is flagged, naming the other', async () => {
    const file = freshPng();
    const [one, two] = [await takenPayout(merchantA), await takenPayout(merchantB)];
    const answers = await Promise.all([completeWith(one!.id, file), completeWith(two!.id, file)]);
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200]);
    const hits = [...(await hitsOnPayout(one!.id)), ...(await hitsOnPayout(two!.id))];
    expect(hits).toHaveLength(1);
    const flagged = hits[0]!.payout_id;
    expect(hits[0]!.inputs.first_payout_id).toBe(flagged === one!.id ? two!.id : one!.id);
  });

  it('a new proof flags nothing', async () => {
    const payout = await takenPayout(merchantB);
    expect((await completeWith(payout.id, freshPng())).statusCode).toBe(200);
    expect(await hitsOnPayout(payout.id)).toEqual([]);
  });
});
