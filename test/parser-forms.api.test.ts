import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  adminOk,
  asPerson,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  executorCall,
  expectLedgerOk,
  type MerchantCredentials,
  type PersonSession,
  setRate,
  signed,
  staffSession,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

// Issue 34 item 3: a person teaches Kassir a message form (docs/devices.md "Teaching a new message
// form"). These walk the operator and executor API; test/parser-forms.test.ts does it in the console.
let service: TestService;
let app: FastifyInstance;
let merchant: MerchantCredentials;
let support: PersonSession & { email: string };

beforeAll(async () => {
  service = await startTestService();
  app = service.app;
  await setRate(app, 'RUB', 95.5);
  merchant = await createMerchant(app);
  support = await staffSession(service, 'support-forms@example.com', 'support');
});
afterAll(async () => service?.close());

let amountSeq = 0;
const nextAmount = () => 1200 + ++amountSeq * 11;

/** An executor with one card (every other card switched off) and a phone. */
async function executorWithPhone() {
  await service.ctx.db.query('UPDATE requisites SET is_active = false');
  const executor = await createExecutor(app);
  const card = await createRequisite(app, executor.id);
  const res = await executorCall(app, executor.token, 'POST', '/devices', { name: 'Redmi' });
  expect(res.statusCode, res.body).toBe(201);
  return { executor, card, last4: card.value.slice(-4), device: res.json() as { id: string; token: string } };
}

function sendMessage(token: string, text: string) {
  return app.inject({
    method: 'POST',
    url: '/device/v1/messages',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ text, received_at: new Date().toISOString() }),
  });
}

async function pay(amount: number): Promise<string> {
  const { status, body } = await createPayment(app, merchant, { ext_id: uniqueExtId('form'), amount });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.id;
}

const statusOf = async (id: string) => (await signed(app, merchant, 'GET', `/v1/payments/${id}`)).json().status;

/** A bank's message in a form no built-in parser knows (no currency mark, its own words). */
const vostok = (last4: string, amount: string, time = '12:34', payer = 'АННА К.') => `VOSTOK ${time} ДЕНЬГИ ПРИШЛИ НА ${last4}: ${amount} (${payer})`;
const VOSTOK_TEMPLATE = 'VOSTOK {time} ДЕНЬГИ ПРИШЛИ НА {card}: {amount} ({payer})';

async function auditOf(objectId: string) {
  return (await adminOk<{ entries: { action: string; actor: string; after: Record<string, unknown> | null }[] }>(app, 'GET', `/audit?object_id=${objectId}`))
    .entries;
}

describe('teaching a message form', () => {
  it('support teaches a form from a linked message; it goes live after the check and the next message in it completes its payment by itself', async () => {
    const { executor, last4, device } = await executorWithPhone();
    const firstAmount = nextAmount();
    const first = await pay(firstAmount);
    const unread = await sendMessage(device.token, vostok(last4, `${firstAmount}.00`));
    expect(unread.json()).toMatchObject({ matched: false, status: 'unreadable' });
    const messageId = unread.json().message_id;
    // Support links it (the payment completes), then teaches its form.
    const linked = await asPerson(app, support, 'POST', `/admin/v1/device-messages/${messageId}/link`, { payment_id: first });
    expect(linked.statusCode, linked.body).toBe(200);
    expect(await statusOf(first)).toBe('COMPLETED');

    const suggest = await asPerson(app, support, 'GET', `/admin/v1/parser-forms/suggest?kind=device_message&id=${messageId}`);
    expect(suggest.statusCode, suggest.body).toBe(200);
    const suggestion = suggest.json() as { text: string; bank: string; currency: string; marks: { hole: string; start: number; end: number }[] };
    // Prefilled from what is known: the linked payment's amount, the requisite's card, the time.
    const marked = Object.fromEntries(suggestion.marks.map((m) => [m.hole, suggestion.text.slice(m.start, m.end)]));
    expect(marked).toMatchObject({ amount: `${firstAmount}.00`, card: last4, time: '12:34' });
    expect(suggestion).toMatchObject({ bank: 'sberbank', currency: 'RUB' });

    const created = await asPerson(app, support, 'POST', '/admin/v1/parser-forms', {
      name: 'Vostok SMS',
      bank: 'vostok',
      currency: 'RUB',
      template: VOSTOK_TEMPLATE,
      sample: suggestion.text,
      source: { kind: 'device_message', id: messageId },
    });
    expect(created.statusCode, created.body).toBe(201);
    const form = created.json();
    expect(form).toMatchObject({
      name: 'Vostok SMS',
      status: 'draft',
      live_version: null,
      created_by: support.email,
      versions: [{ version: 1, status: 'draft' }],
    });

    // A draft reads nothing: the same form of message still waits.
    const stillUnread = await sendMessage(device.token, vostok(last4, '5.00', '12:35'));
    expect(stillUnread.json().status).toBe('unreadable');

    const published = await asPerson(app, support, 'POST', `/admin/v1/parser-forms/${form.id}/versions/1/publish`);
    expect(published.statusCode, published.body).toBe(200);
    const { check } = published.json();
    expect(check.ok).toBe(true);
    expect(check.corpus_lines).toBeGreaterThan(300);
    expect(check.messages).toBeGreaterThanOrEqual(2);
    expect(check.reads_newly.map((l: { source: string }) => l.source)).toContain(`device message ${messageId}`);
    expect(published.json().form).toMatchObject({ status: 'live', live_version: 1, versions: [{ status: 'live', published_by: support.email }] });

    const secondAmount = nextAmount();
    const second = await pay(secondAmount);
    const read = await sendMessage(device.token, vostok(last4, `${secondAmount.toLocaleString('ru-RU').replace(/\s/g, ' ')},00`, '18:02', 'ПЁТР С.'));
    expect(read.json(), read.body).toMatchObject({ matched: true, payment_id: second, status: 'matched' });
    expect(await statusOf(second)).toBe('COMPLETED');
    await expectLedgerOk(app);

    // Audited in the transactions of the changes, naming the person; the message names the form that read it.
    const entries = await auditOf(form.id);
    expect(entries.map((e) => [e.action, e.actor])).toEqual(
      expect.arrayContaining([
        ['parser_form.create', support.email],
        ['parser_form.publish', support.email],
      ]),
    );
    const receive = (await auditOf(read.json().message_id)).find((e) => e.action === 'device_message.receive')!;
    expect(receive.after).toMatchObject({ read_by_form: { form_id: form.id, version: 1, name: 'Vostok SMS' }, payment_id: second });

    // The companion app's text is read by it too (when it sends no amount).
    const thirdAmount = nextAmount();
    const third = await pay(thirdAmount);
    const requisite = (await adminOk<{ payment_id?: string; requisite_id: string }>(app, 'GET', `/payments/${third}`)).requisite_id;
    const notified = await executorCall(app, executor.token, 'POST', '/notifications', {
      requisite_id: requisite,
      text: vostok(last4, `${thirdAmount}`, '19:00'),
    });
    expect(notified.json(), notified.body).toMatchObject({ matched: true, payment_id: third });

    // Exported as corpus lines for the project.
    const exported = await asPerson(app, support, 'GET', '/admin/v1/parser-forms/export');
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^text\/tab-separated-values/);
    const line = exported.body.split('\n').find((l) => l.includes('VOSTOK'))!;
    expect(exported.body).toContain('# corpus/vostok.tsv');
    expect(line.split('\t').slice(0, 9)).toEqual(['sms', '', '+', `${firstAmount}.00`, 'RUB', `card:${last4}`, 'АННА К.', '', suggestion.text]);
    expect(line.split('\t')[9]).toMatch(/^derived: taught as "Vostok SMS" v1 by support-forms@example.com/);

    // Retired: the next message in the form waits for a person again.
    const retired = await asPerson(app, support, 'POST', `/admin/v1/parser-forms/${form.id}/retire`);
    expect(retired.json()).toMatchObject({ status: 'retired', live_version: null });
    const afterRetire = await sendMessage(device.token, vostok(last4, '7.00', '20:00'));
    expect(afterRetire.json().status).toBe('unreadable');
    expect((await auditOf(form.id)).map((e) => e.action)).toContain('parser_form.retire');
  });

  it('a form that would credit a negative corpus line is refused, showing the line, and stays a draft', async () => {
    // MKB's cashback SMS is a negative line of corpus/mkb.tsv: a credit form of it must never go live.
    const text = 'MKB: 02.07.18 Вам начислен cashback 12.50 RUB по карте *3418. Баланс 100.00 RUB. Расплачивайтесь картой и зарабатывайте на покупках.';
    const created = await asPerson(app, support, 'POST', '/admin/v1/parser-forms', {
      name: 'MKB cashback',
      bank: 'mkb',
      currency: 'RUB',
      template: 'MKB: {date} Вам начислен cashback {amount} RUB по карте {card}. Баланс {balance} RUB. {any}',
      sample: text,
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    const refused = await asPerson(app, support, 'POST', `/admin/v1/parser-forms/${id}/versions/1/publish`);
    expect(refused.statusCode, refused.body).toBe(422);
    const body = refused.json();
    expect(body.error).toBe('FORM_001');
    expect(body.data.offending).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          source: expect.stringMatching(/^corpus\/mkb\.tsv:\d+$/),
          text: expect.stringContaining('Вам начислен cashback 1678.26 RUB'),
          reason: 'a text that must not be read, read as money received',
          reads: { amount: '1678.26', digits: '3418' },
        }),
      ]),
    );
    const form = await adminOk<{ status: string; versions: { status: string }[] }>(app, 'GET', '/parser-forms').then(
      (list) => (list as unknown as { forms: { id: string; status: string; versions: { status: string }[] }[] }).forms.find((f) => f.id === id)!,
    );
    expect(form).toMatchObject({ status: 'draft', versions: [{ status: 'draft' }] });
    expect((await auditOf(id)).map((e) => e.action)).not.toContain('parser_form.publish');
  });

  it('versions: a new version goes live in place of the old; one that changes what a kept message read, or reads it otherwise than its payment, is refused', async () => {
    const { last4, device } = await executorWithPhone();
    const text = (amount: string, time: string) => `ZAPAD ${time} KARTA ${last4} PLUS ${amount} OSTATOK 90000.00`;
    const created = await adminOk<{ id: string }>(app, 'POST', '/parser-forms', {
      name: 'Zapad',
      bank: 'zapad',
      currency: 'RUB',
      template: 'ZAPAD {time} KARTA {card} PLUS {amount} OSTATOK {balance}',
      sample: text('10.00', '09:00'),
    });
    await adminOk(app, 'POST', `/parser-forms/${created.id}/versions/1/publish`);
    const amount = nextAmount();
    const payment = await pay(amount);
    const read = await sendMessage(device.token, text(`${amount}.00`, '09:10'));
    expect(read.json()).toMatchObject({ matched: true, payment_id: payment });

    // Version 2 reads the balance as the amount: the kept message would read otherwise. Refused.
    const v2 = await adminOk<{ versions: { version: number }[] }>(app, 'POST', `/parser-forms/${created.id}/versions`, {
      template: 'ZAPAD {time} KARTA {card} PLUS {balance} OSTATOK {amount}',
      sample: text('10.00', '09:00'),
    });
    expect(v2.versions.map((v) => v.version)).toEqual([1, 2]);
    const refused = await admin(app, 'POST', `/parser-forms/${created.id}/versions/2/publish`);
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json().data.offending).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          source: `device message ${read.json().message_id}`,
          reason: `read as ${amount}.00 on *${last4} before`,
          reads: { amount: '90000.00', digits: last4 },
        }),
      ]),
    );

    // Version 3 also reads "SCHET 1234" where version 1 read "KARTA 1234": it reads every kept message as version 1 did; it goes live, version 1 retires.
    await adminOk(app, 'POST', `/parser-forms/${created.id}/versions`, {
      template: 'ZAPAD {time} {any} {card} PLUS {amount} OSTATOK {balance}',
      sample: text('10.00', '09:00:59').replace('KARTA', 'SCHET'),
    });
    const live = await adminOk<{ form: { live_version: number; versions: { version: number; status: string }[] } }>(
      app,
      'POST',
      `/parser-forms/${created.id}/versions/3/publish`,
    );
    expect(live.form.live_version).toBe(3);
    expect(live.form.versions.map((v) => [v.version, v.status])).toEqual([
      [1, 'retired'],
      [2, 'draft'],
      [3, 'live'],
    ]);
    const again = await admin(app, 'POST', `/parser-forms/${created.id}/versions/3/publish`);
    expect(again.statusCode).toBe(409);

    // A message a person linked to its payment: a form that reads it with another amount is refused.
    const linkedAmount = nextAmount();
    const linkedPayment = await pay(linkedAmount);
    const odd = `SEVER PRIHOD ${last4} ${linkedAmount}.00 KOMISSIYA 15.00`;
    const unread = await sendMessage(device.token, odd);
    expect(unread.json().status).toBe('unreadable');
    await adminOk(app, 'POST', `/device-messages/${unread.json().message_id}/link`, { payment_id: linkedPayment });
    const wrong = await adminOk<{ id: string }>(app, 'POST', '/parser-forms', {
      name: 'Sever (fee as the amount)',
      bank: 'sever',
      currency: 'RUB',
      template: 'SEVER PRIHOD {card} {balance} KOMISSIYA {amount}',
      sample: odd,
    });
    const refusedWrong = await admin(app, 'POST', `/parser-forms/${wrong.id}/versions/1/publish`);
    expect(refusedWrong.statusCode).toBe(422);
    expect(refusedWrong.json().data.offending).toEqual([
      expect.objectContaining({
        source: `device message ${unread.json().message_id}`,
        reason: `its payment was ${linkedAmount}.00`,
        reads: { amount: '15.00', digits: last4 },
      }),
    ]);
  });

  it('a template is literal text with typed holes: one that is no form is refused before it is stored', async () => {
    const sample = 'ZAPAD 09:00. Zachislenie na 1234 summa 10.00. Ostatok 5.00';
    const bad: [string, RegExp][] = [
      ['ZAPAD {time}. Zachislenie na {card} summa 10.00. Ostatok {balance}', /mark the amount/],
      ['ZAPAD {time}. Zachislenie na {card} summa {amount}{any}', /two holes need text between them/],
      ['{any} {amount}{payer}', /two holes/],
      ['{any} {payer} {amount}. Ostatok {balance}', /need words between them/],
      ['{any} {amount}. {any}', /at least 5 letters/],
      ['ZAPAD {time}. Zachislenie na {card} summa -{amount}. Ostatok {balance}', /minus before \{amount\}/],
      ['ZAPAD {time}. Zachislenie (.*) na {card} summa {amount}. Ostatok {balance}', /does not read the message/],
      ['ZAPAD {time}. Zachislenie na {card} summa {sum}. Ostatok {balance}', /\{sum\} is not a hole/],
    ];
    for (const [template, message] of bad) {
      const res = await admin(app, 'POST', '/parser-forms', { name: 'x', bank: 'zapad', currency: 'RUB', template, sample });
      expect(res.statusCode, template).toBe(400);
      expect(res.json().message, template).toMatch(message);
    }
    const wrongCurrency = await admin(app, 'POST', '/parser-forms', {
      name: 'x',
      bank: 'zapad',
      currency: 'USD',
      template: 'ZAPAD {amount} rub',
      sample: 'ZAPAD 1 rub',
    });
    expect(wrongCurrency.json().message).toMatch(/currency/);
  });

  it('who may teach: staff by role; an executor proposes from its own message a draft only support puts live', async () => {
    const finance = await staffSession(service, 'finance-forms@example.com', 'finance');
    const body = {
      name: 'Finance form',
      bank: 'zapad',
      currency: 'RUB',
      template: 'YUG {time} prishlo {amount} rub na {card}',
      sample: 'YUG 10:00 prishlo 5 rub na 1234',
    };
    expect((await asPerson(app, finance, 'POST', '/admin/v1/parser-forms', body)).statusCode).toBe(201);
    // Without the CSRF token a session cannot teach.
    const noCsrf = await app.inject({ method: 'POST', url: '/admin/v1/parser-forms', headers: { cookie: support.cookie }, payload: body });
    expect(noCsrf.statusCode).toBe(403);

    const { executor, last4, device } = await executorWithPhone();
    const other = await executorWithPhone();
    const text = `KAMA ${last4} VNESENO 350.00 OT Ivan`;
    const message = (await sendMessage(device.token, text)).json().message_id;
    const otherMessage = (await sendMessage(other.device.token, `KAMA ${other.last4} VNESENO 1.00 OT Ivan`)).json().message_id;
    const suggestion = await executorCall(app, executor.token, 'GET', `/parser-forms/suggest?kind=device_message&id=${message}`);
    expect(suggestion.statusCode, suggestion.body).toBe(200);
    expect((await executorCall(app, executor.token, 'GET', `/parser-forms/suggest?kind=device_message&id=${otherMessage}`)).statusCode).toBe(404);
    const proposal = { name: 'Kama', bank: 'kama', currency: 'RUB', template: 'KAMA {card} VNESENO {amount} OT {payer}', sample: text };
    expect(
      (await executorCall(app, executor.token, 'POST', '/parser-forms', { ...proposal, source: { kind: 'device_message', id: otherMessage } })).statusCode,
    ).toBe(404);
    const proposed = await executorCall(app, executor.token, 'POST', '/parser-forms', { ...proposal, source: { kind: 'device_message', id: message } });
    expect(proposed.statusCode, proposed.body).toBe(201);
    expect(proposed.json()).toMatchObject({ status: 'draft', proposed_by_executor: executor.id, created_by: expect.stringMatching(/^executor:/) });
    // The executor has no way to put it live, and sees only its own proposals.
    expect((await executorCall(app, executor.token, 'POST', `/parser-forms/${proposed.json().id}/versions/1/publish`)).statusCode).toBe(404);
    expect((await executorCall(app, executor.token, 'GET', '/parser-forms')).json().forms.map((f: { id: string }) => f.id)).toEqual([proposed.json().id]);
    expect((await executorCall(app, other.executor.token, 'GET', '/parser-forms')).json().forms).toEqual([]);
    // Support reviews it and puts it live.
    const live = await asPerson(app, support, 'POST', `/admin/v1/parser-forms/${proposed.json().id}/versions/1/publish`);
    expect(live.statusCode, live.body).toBe(200);
    expect((await auditOf(proposed.json().id)).map((e) => [e.action, e.actor])).toEqual(
      expect.arrayContaining([
        ['parser_form.create', expect.stringMatching(/^executor:/)],
        ['parser_form.publish', support.email],
      ]),
    );
  });
});
