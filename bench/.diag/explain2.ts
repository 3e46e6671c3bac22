import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool, transaction } from '../../src/db/pool.js';
import { insertPaymentWithCascade } from '../../src/payments/payments.repo.js';

const dir = mkdtempSync(join(tmpdir(), 'kassir-diag-'));
chmodSync(dir, 0o711);
const quiet = { info: () => undefined, debug: () => undefined };
const e = await startEmbeddedPostgres(join(dir, 'data'), undefined, quiet);
const db = createPool(e.url);
const PICK = `
  SELECT r.id, $3::numeric AS payer_amount
    FROM requisites r
    JOIN executors e ON e.id = r.executor_id AND e.is_active
   WHERE r.is_active AND r.currency = $1 AND r.country = $2
     AND r.type = ($4::text[])[1] AND $5::text = ANY(r.methods) AND ($6::text IS NULL OR r.bank_code = $6)
     AND $3::numeric >= r.min_amount AND (r.max_amount IS NULL OR $3::numeric <= r.max_amount)
     AND NOT EXISTS (SELECT 1 FROM payments q WHERE q.requisite_id = r.id AND q.status = 'PENDING' AND q.payer_amount = $3::numeric)
   ORDER BY r.last_used_at NULLS FIRST, r.id
   LIMIT 1
   FOR UPDATE OF r SKIP LOCKED`;
try {
  await migrate(db, quiet);
  if (process.env.IDX === '1') await db.query(`DROP INDEX requisites_pool; CREATE INDEX requisites_pool ON requisites (currency, type, last_used_at NULLS FIRST, id) WHERE is_active`);
  if (process.env.IDX === '2') await db.query(`DROP INDEX requisites_pool; CREATE INDEX requisites_pool ON requisites (currency, last_used_at NULLS FIRST, id) WHERE is_active`);
  const nreq = Number(process.env.NREQ ?? 1000);
  const npay = Number(process.env.NPAY ?? 5000);
  await db.query(`
    INSERT INTO merchants (name) VALUES ('m');
    INSERT INTO terminals (merchant_id, name, currency) SELECT id, 't', 'RUB' FROM merchants;
    INSERT INTO executors (name, token_hash) VALUES ('e', '\\x00');
    INSERT INTO requisites (executor_id, type, value, bank_code, holder, currency, country, methods, min_amount, max_amount)
      SELECT e.id, CASE WHEN g % 3 = 0 THEN 'phone' ELSE 'card' END, '2200' || lpad(g::text, 12, '0'), 'sberbank', 'I', 'RUB', 'RU', CASE WHEN g % 3 = 0 THEN ARRAY['PHONE'] ELSE ARRAY['CARD'] END, 100, 300000 FROM executors e, generate_series(1, ${nreq}) g;`);
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
  console.log(`${npay} creates (current SQL) sequentially: ${((Date.now() - t0) / npay).toFixed(2)} ms each`);
  if (process.env.ANALYZE === '1') await db.query('ANALYZE');
  const params = ['RUB', 'RU', '12345.67', ['card'], 'CARD', null];
  const r = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${PICK}`, params);
  console.log(r.rows.map((x: any) => x['QUERY PLAN']).join('\n'));
  const t1 = Date.now();
  for (let i = 0; i < 500; i++) await transaction(db, async (tx) => { await tx.query(`WITH pick AS (${PICK}) UPDATE requisites r SET last_used_at = clock_timestamp() FROM pick WHERE r.id = pick.id`, [...params.slice(0, 2), ((10000 + Math.floor(Math.random() * 29990001)) / 100).toFixed(2), ...params.slice(3)]); });
  console.log(`500 scalar picks: ${((Date.now() - t1) / 500).toFixed(2)} ms each`);
} finally {
  await db.end();
  await e.stop();
  rmSync(dir, { recursive: true, force: true });
}
