import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningService } from '../src/service.js';
import { createExecutor, createMerchant, createPayment, createRequisite, setRate, startTestService, uniqueExtId, type TestService } from './helpers.js';

let service: TestService; let a: RunningService; let b: RunningService;
beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '1000' });
  a = await service.startAnother(); b = await service.startAnother();
  await setRate(service.app, 'RUB', 95.5);
});
afterAll(async () => service?.close());

for (const [terminals, reqs, n] of [[8, 20, 120], [16, 10, 120], [30, 30, 120], [60, 5, 120]] as const) {
  it(`stress ${terminals} terminals ${reqs} reqs ${n}`, async () => {
    await service.ctx.db.query('UPDATE executors SET is_active = false');
    const ms = []; for (let i = 0; i < terminals; i++) ms.push(await createMerchant(service.app));
    const ex = await createExecutor(service.app);
    for (let i = 0; i < reqs; i++) await createRequisite(service.app, ex.id);
    const apps = [a.app, b.app];
    for (let round = 0; round < 3; round++) {
      await service.ctx.db.query(`UPDATE payments SET status='CANCELLED' WHERE status='PENDING'`);
      const res = await Promise.all(Array.from({ length: n }, (_, i) => createPayment(apps[i % 2]!, ms[i % terminals]!, { ext_id: uniqueExtId(), amount: 3000, method: 'CARD' })));
      const t: Record<string, number> = {};
      for (const r of res) { const k = r.status === 200 ? '200' : `${r.status} ${r.body.error} ${r.status === 500 ? r.body.message : ''}`; t[k] = (t[k] ?? 0) + 1; }
      console.log(terminals, reqs, round, JSON.stringify(t));
      expect(t['200']).toBe(reqs);
    }
  }, 60000);
}
