import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireDuePayments } from '../src/payments/lifecycle.js';
import {
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

// Expiry runs from the job queue (graphile-worker), with two instances sweeping the same database.
let service: TestService;
let merchant: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService({ PAYMENT_TTL_SECONDS: '2', KASSIR_EXPIRY_SWEEP_SECONDS: '1' }, { worker: true });
  await service.startAnother();
  await setRate(service.app, 'RUB', 90);
  merchant = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  for (let i = 0; i < 5; i++) await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close());

describe('expiry', () => {
  it('cancels PENDING payments past valid_until with both instances sweeping', async () => {
    const created: { id: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const { status, body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1000 + i });
      expect(status).toBe(200);
      created.push(body as { id: string });
    }
    for (const payment of created) {
      const cancelled = await until(
        async () => {
          const res = await signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`);
          const body = res.json() as { status: string };
          return body.status === 'CANCELLED' ? body : undefined;
        },
        20_000,
        200,
      );
      expect(cancelled.status).toBe('CANCELLED');
      // Not before its time: the sweep only takes payments whose valid_until has passed.
      const { rows } = await service.ctx.db.query('SELECT updated_at >= valid_until AS on_time, cancel_reason FROM payments WHERE id = $1', [payment.id]);
      expect(rows[0]).toEqual({ on_time: true, cancel_reason: 'expired' });
    }
  });

  it('leaves payments that are still valid alone', async () => {
    const { body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 2000 });
    const res = await signed(service.app, merchant, 'GET', `/v1/payments/${body.id}`);
    expect(res.json().status).toBe('PENDING');
  });

  it('expires no more payments in one sweep than its limit', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 3000 + i });
      ids.push((body as { id: string }).id);
    }
    // Made due inside this transaction only: the instances' own sweeps cannot see them.
    const client = await service.ctx.db.connect();
    try {
      await client.query('BEGIN');
      await client.query("UPDATE payments SET valid_until = now() - interval '1 second' WHERE id = ANY($1)", [ids]);
      const first = await expireDuePayments(client, service.ctx.config, 1);
      expect(first.map((change) => change.id).filter((id) => ids.includes(id))).toHaveLength(1);
      const rest = await expireDuePayments(client, service.ctx.config, 10);
      expect(new Set([...first, ...rest].map((change) => change.id).filter((id) => ids.includes(id)))).toEqual(new Set(ids));
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
