import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool, transaction } from '../../src/db/pool.js';
import { insertPaymentWithCascade } from '../../src/payments/payments.repo.js';

const dir = mkdtempSync(join(tmpdir(), 'kassir-diag-'));
chmodSync(dir, 0o711);
const quiet = { info: () => undefined, debug: () => undefined };
const e = await startEmbeddedPostgres(join(dir, 'data'), undefined, quiet);
const db = createPool(e.url);
try {
  await migrate(db, quiet);
  const nreq = Number(process.env.NREQ ?? 1000);
  const npay = Number(process.env.NPAY ?? 5000);
  await db.query(`
    INSERT INTO merchants (name) VALUES ('m');
    INSERT INTO terminals (merchant_id, name, currency) SELECT id, 't', 'RUB' FROM merchants;
    INSERT INTO executors (name, token_hash) VALUES ('e', '\\x00');
    INSERT INTO requisites (executor_id, type, value, bank_code, holder, currency, country, methods, min_amount, max_amount)
      SELECT e.id, 'card', '2200' || lpad(g::text, 12, '0'), 'sberbank', 'I', 'RUB', 'RU', ARRAY['CARD'], 100, 300000 FROM executors e, generate_series(1, ${nreq}) g;`);
  const { rows: [ids] } = await db.query(`SELECT (SELECT id FROM merchants) m, (SELECT id FROM terminals) t`);
  const p = (i: number, amount: string) => ({
    merchantId: ids.m, terminalId: ids.t, extId: `x${i}`, amount, currency: 'RUB', method: 'CARD', rate: '95.5', payinRate: '2.5',
    crossBorder: false, clientId: null, notifyUrl: null, notificationToken: null, pageToken: `pt${i}`, ttlSeconds: 86400,
    types: ['card'], bank: null, candidates: [{ currency: 'RUB', country: 'RU', payerAmount: amount }],
  });
  const t0 = Date.now();
  for (let i = 0; i < npay; i++) {
    const amount = ((10000 + Math.floor(Math.random() * 29990001)) / 100).toFixed(2);
    await transaction(db, (tx) => insertPaymentWithCascade(tx, p(i, amount), true));
  }
  console.log(`${npay} creates sequentially: ${((Date.now() - t0) / npay).toFixed(2)} ms each`);
  if (process.env.ANALYZE === '1') await db.query('ANALYZE');
  await transaction(db, async (tx) => {
    const fake = { query: async (sql: string, params: unknown[]) => {
      const r = await tx.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
      console.log(r.rows.map((x: any) => x['QUERY PLAN']).join('\n'));
      return { rows: [] };
    } } as unknown as pg.PoolClient;
    await insertPaymentWithCascade(fake, p(npay + 1, '12345.67'), true);
    throw new Error('rollback');
  }).catch(() => undefined);
} finally {
  await db.end();
  await e.stop();
  rmSync(dir, { recursive: true, force: true });
}
