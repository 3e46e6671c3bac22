import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  setRate,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

// The payment create runs named (prepared) statements, one of which returns `payments.*`. A
// migration that adds a column while an instance runs makes PostgreSQL refuse that statement on
// every connection where it was prepared ("cached plan must not change result type").

let service: TestService;
let merchant: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  for (let i = 0; i < 3; i++) await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close());

describe('prepared statements across a schema change', () => {
  it('keeps creating payments after a column is added to payments under the running service', async () => {
    // Sequential creates reuse the pool's most recently released connection, so the statements
    // prepared by these are the ones the creates after the ALTER meet.
    for (let i = 0; i < 3; i++) {
      const { status } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1000 + i, currency: 'RUB', method: 'CARD' });
      expect(status).toBe(200);
    }
    await service.ctx.db.query('ALTER TABLE payments ADD COLUMN rolling_upgrade_note text');

    for (let i = 0; i < 3; i++) {
      const extId = uniqueExtId();
      const { status, body } = await createPayment(service.app, merchant, { ext_id: extId, amount: 2000 + i, currency: 'RUB', method: 'CARD' });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ ext_id: extId, status: 'PENDING', amount: 2000 + i });
    }
    const { rows } = await service.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1`, [merchant.merchantId]);
    expect(rows[0]!.n).toBe(6);
  });
});
