/**
 * The raw ceiling of issue 4's benchmark: a bare Fastify route doing what a payment create cannot
 * do with less — one transaction of one SELECT … FOR UPDATE, one UPDATE and one INSERT — on the
 * same PostgreSQL, through the same pool code and pool size as the service. No logging, no
 * authentication, no validation beyond Fastify's JSON parsing: everything the service does on top
 * of this is what the create/ceiling ratio measures.
 *
 * Run as a child process by bench/run.ts: DATABASE_URL, PORT and POOL_SIZE come from the environment;
 * "ready <port>" on stdout tells the parent it is listening.
 */
import Fastify from 'fastify';
import { DEFAULT_DB_POOL_SIZE } from '../src/config.js';
import { createPool, transaction } from '../src/db/pool.js';

/** Counter rows the transactions spread over, so that they do not all queue on one hot row. */
const ROWS = 1000;

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  const db = createPool(url, Number(process.env.POOL_SIZE ?? DEFAULT_DB_POOL_SIZE));
  await db.query(`
    CREATE TABLE IF NOT EXISTS bench_counters (id integer PRIMARY KEY, total numeric(20, 2) NOT NULL DEFAULT 0, n bigint NOT NULL DEFAULT 0);
    CREATE TABLE IF NOT EXISTS bench_log (
      id         bigserial PRIMARY KEY,
      counter_id integer NOT NULL REFERENCES bench_counters(id),
      amount     numeric(20, 2) NOT NULL,
      ext_id     text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO bench_counters (id) SELECT g FROM generate_series(1, ${ROWS}) g ON CONFLICT DO NOTHING;`);

  const app = Fastify({ logger: false });
  app.post<{ Body: { ext_id?: string; amount?: number } }>('/ceiling', async (request) => {
    const counter = 1 + Math.floor(Math.random() * ROWS);
    const amount = String(request.body?.amount ?? 100);
    return transaction(db, async (tx) => {
      await tx.query('SELECT total, n FROM bench_counters WHERE id = $1 FOR UPDATE', [counter]);
      await tx.query('UPDATE bench_counters SET total = total + $2, n = n + 1 WHERE id = $1', [counter, amount]);
      const { rows } = await tx.query<{ id: string }>('INSERT INTO bench_log (counter_id, amount, ext_id) VALUES ($1, $2, $3) RETURNING id', [
        counter,
        amount,
        request.body?.ext_id ?? '',
      ]);
      return { id: rows[0]!.id, counter };
    });
  });

  const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
  process.stdout.write(`ready ${new URL(address).port}\n`);
  const stop = () => {
    void app
      .close()
      .then(() => db.end())
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
