/**
 * The history of bench figure (d) (issue 38): `rows` payments as a long-running installation
 * accumulates them, with what each left behind in the other growing tables, inserted with SQL
 * (set-based INSERT … SELECT over generate_series, in chunks, over two connections), every index
 * kept (the point is to measure creates and the console against real indexes):
 *
 *   payments            over the last BENCH_HISTORY_DAYS (365) days, evenly, over every RUB terminal
 *                       (merchants' and terminals' ids as the operator API made them) and every
 *                       requisite (with its executor and the hold it froze); 60 % CANCELLED (expired),
 *                       39.99 % COMPLETED, one in ten thousand still PENDING (valid for a day)
 *   ledger              per payment the hold's posting (payin_hold: executor available → frozen) and,
 *                       once it ended, the completion's pay-in (the hold to the terminal's net, the
 *                       executor's reward and the platform's fee) or the hold's release — the
 *                       postings the service makes, balanced; the accounts' balances are moved by
 *                       the sums at the end, so the ledger check still finds nothing
 *   webhook_events      one delivered event per ended payment (payment.completed / payment.cancelled),
 *   webhook_attempts    with its one attempt
 *   notifications       the executor's incoming money for each completed payment (matched), and a late
 *                       one, set aside (resolved), for one cancelled payment in 200
 *   device_messages     the bank's message behind each notification of the executors that have a phone
 *                       (every other executor: one device each, retired since)
 *
 * Rows reference each other by ids derived from the row's number (md5 → uuid: as scattered as
 * gen_random_uuid's), so one statement writes a chunk of every table; the foreign-key and other
 * triggers are off for these sessions (session_replication_role = replica: the rows reference
 * existing rows by construction, and the ledger's deferred balance check would check what is
 * balanced by construction). Through the tables' own names only (plain INSERT … SELECT), so the
 * generator works as well on partitioned tables.
 */
import pg from 'pg';
import { rollUpSystemTotals } from '../src/ledger/system-totals.js';

export interface HistoryOptions {
  /** Payments to insert. */
  rows: number;
  /** The days they are spread over, ending now. */
  days: number;
  /** Payments per statement. */
  chunk?: number;
  /** Connections inserting at once. */
  workers?: number;
  progress?: (message: string) => void;
}

export interface HistoryResult {
  seconds: number;
  /** Rows written per table. */
  counts: Record<string, number>;
}

interface Shape {
  terminals: { ids: string[]; merchants: string[]; accounts: string[]; payinRates: string[] };
  requisites: {
    ids: string[];
    values: string[];
    banks: (string | null)[];
    executors: string[];
    available: string[];
    frozen: string[];
    rewards: string[];
    devices: (string | null)[];
  };
  feeAccount: string;
}

/** The terminals, requisites and accounts the history is spread over, read once. */
async function readShape(client: pg.Client): Promise<Shape> {
  const t = await client.query<{ id: string; merchant_id: string; account: string; payin_rate: string }>(
    `SELECT t.id, t.merchant_id, a.id AS account, t.payin_rate::text
       FROM terminals t JOIN ledger_accounts a ON a.terminal_id = t.id AND a.kind = 'terminal_available'
      WHERE t.currency = 'RUB' AND NOT t.is_test ORDER BY t.id`,
  );
  const r = await client.query<{
    id: string;
    value: string;
    bank_code: string | null;
    executor_id: string;
    available: string;
    frozen: string;
    reward: string;
    device: string | null;
  }>(
    `SELECT q.id, q.value, q.bank_code, q.executor_id, av.id AS available, fr.id AS frozen, e.payin_reward::text AS reward,
            (SELECT d.id FROM devices d WHERE d.executor_id = q.executor_id ORDER BY d.created_at LIMIT 1) AS device
       FROM requisites q
       JOIN executors e ON e.id = q.executor_id
       JOIN ledger_accounts av ON av.executor_id = q.executor_id AND av.kind = 'executor_available'
       JOIN ledger_accounts fr ON fr.executor_id = q.executor_id AND fr.kind = 'executor_frozen'
      WHERE q.currency = 'RUB' ORDER BY q.id`,
  );
  const fee = await client.query<{ id: string }>(
    `SELECT id FROM ledger_accounts WHERE kind = 'system_fee_revenue' AND terminal_id IS NULL AND executor_id IS NULL`,
  );
  if (t.rows.length === 0 || r.rows.length === 0 || fee.rows.length === 0)
    throw new Error('history: no RUB terminal, requisite or fee account to spread it over');
  return {
    terminals: {
      ids: t.rows.map((x) => x.id),
      merchants: t.rows.map((x) => x.merchant_id),
      accounts: t.rows.map((x) => x.account),
      payinRates: t.rows.map((x) => x.payin_rate),
    },
    requisites: {
      ids: r.rows.map((x) => x.id),
      values: r.rows.map((x) => x.value),
      banks: r.rows.map((x) => x.bank_code),
      executors: r.rows.map((x) => x.executor_id),
      available: r.rows.map((x) => x.available),
      frozen: r.rows.map((x) => x.frozen),
      rewards: r.rows.map((x) => x.reward),
      devices: r.rows.map((x) => x.device),
    },
    feeAccount: fee.rows[0]!.id,
  };
}

/**
 * One chunk, payments $1..$2 of $3, in one statement. Row g is created at now − ($3 − g) × $4
 * seconds ($5 = the end of the history, an hour before the system totals' upto): the last row is the newest.
 */
const CHUNK_SQL = `
WITH g AS MATERIALIZED (
  SELECT g, (lpad(to_hex((g * 4294967295 / ($3::bigint + 1))), 8, '0') || substr(md5('hist-p-' || g), 9))::uuid AS id,
         lpad(to_hex((g * 4294967295 / ($3::bigint + 1))), 8, '0') AS key,
         -- the cascade hands out the cards in turn, so one card's payments are spread over time and
         -- over the terminals, not bunched: a hash of the row's number picks the card
         1 + g % cardinality($6::uuid[]) AS ti, 1 + (hashint8(g) & 2147483647) % cardinality($10::uuid[]) AS ri,
         $5::timestamptz - make_interval(secs => ($3::bigint - g) * $4::float8) AS at,
         CASE WHEN g % 10000 = 0 THEN 'PENDING' WHEN (hashint8(-g) & 2147483647) % 100 < 60 THEN 'CANCELLED' ELSE 'COMPLETED' END AS status,
         round((100 + (g::bigint * 7919) % 299900)::numeric + (g % 100) / 100.0, 2) AS amount
    FROM generate_series($1::bigint, $2::bigint) g
), t AS (
  SELECT * FROM unnest($6::uuid[], $7::uuid[], $8::uuid[], $9::numeric[]) WITH ORDINALITY AS t(terminal_id, merchant_id, terminal_account, payin_rate, ti)
), r AS (
  SELECT * FROM unnest($10::uuid[], $11::text[], $12::text[], $13::uuid[], $14::uuid[], $15::uuid[], $16::numeric[], $17::uuid[])
         WITH ORDINALITY AS r(requisite_id, req_value, bank, executor_id, available, frozen, reward_rate, device_id, ri)
), v AS MATERIALIZED (
  SELECT g.*, t.terminal_id, t.merchant_id, t.terminal_account, t.payin_rate,
         r.requisite_id, r.req_value, r.bank, r.executor_id, r.available, r.frozen, r.reward_rate, r.device_id,
         round(g.amount / 95.5, 6) AS hold,
         CASE g.status WHEN 'COMPLETED' THEN g.at + make_interval(secs => 60 + g.g % 600)
                       WHEN 'CANCELLED' THEN g.at + interval '15 minutes' END AS ended
    FROM g JOIN t USING (ti) JOIN r USING (ri)
), p AS (
  INSERT INTO payments (id, merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate,
                        requisite_id, executor_id, hold, req_type, req_value, req_bank_code, req_holder, req_country, req_currency,
                        payer_amount, cross_border, client_id, notify_url, page_token, valid_until, cancel_reason,
                        created_at, updated_at, completed_at, received_amount)
  SELECT v.id, v.merchant_id, v.terminal_id, 'hist-' || v.g, v.amount, 'RUB', 'CARD', v.status, 95.5, v.payin_rate,
         v.requisite_id, v.executor_id, v.hold, 'card', v.req_value, v.bank, 'Ivan I.', 'RU', 'RUB',
         v.amount, false, 'client-' || (v.g % 50000), 'https://shop.example/kassir/hook', 'hist-' || v.g,
         CASE WHEN v.status = 'PENDING' THEN $5::timestamptz + interval '1 day' ELSE v.at + interval '15 minutes' END,
         CASE WHEN v.status = 'CANCELLED' THEN 'expired' END,
         v.at, coalesce(v.ended, v.at),
         CASE WHEN v.status = 'COMPLETED' THEN v.ended END,
         CASE WHEN v.status = 'COMPLETED' THEN v.amount END
    FROM v
  -- a PENDING row that meets a live payment's (requisite, amount) is left out, and with it its rows below
  ON CONFLICT DO NOTHING
  RETURNING id
), k AS MATERIALIZED (
  SELECT v.*, (v.key || substr(md5('hist-h-' || v.g), 9))::uuid AS hold_tx, (v.key || substr(md5('hist-s-' || v.g), 9))::uuid AS end_tx,
         round(v.hold * (1 - v.payin_rate / 100), 6) AS net, round(v.hold * v.reward_rate / 100, 6) AS reward
    FROM v JOIN p USING (id)
), lt AS (
  INSERT INTO ledger_transactions (id, kind, ref_id, merchant_id, created_at)
  SELECT * FROM (
    SELECT hold_tx, 'payin_hold', id, merchant_id, at FROM k
    UNION ALL
    SELECT end_tx, CASE status WHEN 'COMPLETED' THEN 'payin' ELSE 'payin_hold_release' END, id, merchant_id, ended FROM k WHERE status <> 'PENDING'
  ) x (id, kind, ref_id, merchant_id, at)
  -- in the order they happened, as the service writes them: one payment's postings far apart
  ORDER BY at
), e AS MATERIALIZED (
  SELECT hold_tx AS tx, available AS account, -hold AS amount, at, false AS at_commit FROM k
  UNION ALL SELECT hold_tx, frozen, hold, at, false FROM k
  UNION ALL SELECT end_tx, frozen, -hold, ended, false FROM k WHERE status <> 'PENDING'
  UNION ALL SELECT end_tx, available, hold, ended, false FROM k WHERE status = 'CANCELLED'
  UNION ALL SELECT end_tx, terminal_account, net, ended, true FROM k WHERE status = 'COMPLETED'
  UNION ALL SELECT end_tx, available, reward, ended, false FROM k WHERE status = 'COMPLETED'
  UNION ALL SELECT end_tx, $18::uuid, hold - net - reward, ended, false FROM k WHERE status = 'COMPLETED'
), le AS (
  INSERT INTO ledger_entries (transaction_id, account_id, amount, created_at, applied_at_commit)
  SELECT tx, account, amount, at, at_commit FROM e WHERE amount <> 0
  -- each posting's entries together, the postings in the order they happened (an account's
  -- entries are spread over the table as they are in production, not bunched by the chunk)
  ORDER BY at, tx
), moved AS (
  INSERT INTO pg_temp.history_moves (account_id, amount)
  SELECT account, sum(amount) FROM e WHERE amount <> 0 GROUP BY account
), we AS (
  INSERT INTO webhook_events (id, merchant_id, resource_type, resource_id, event, payload, url, status, attempts,
                              next_attempt_at, created_at, delivered_at)
  SELECT (key || substr(md5('hist-w-' || g), 9))::uuid, merchant_id, 'payment', id, 'payment.' || lower(status),
         jsonb_build_object('id', id, 'ext_id', 'hist-' || g, 'status', status, 'amount', amount::text, 'currency', 'RUB',
                            'received_amount', CASE WHEN status = 'COMPLETED' THEN amount::text END),
         'https://shop.example/kassir/hook', 'delivered', 1, ended, ended, ended + interval '0.2 seconds'
    FROM k WHERE status <> 'PENDING'
), wa AS (
  INSERT INTO webhook_attempts (event_id, attempt, started_at, status_code, latency_ms)
  SELECT (key || substr(md5('hist-w-' || g), 9))::uuid, 1, ended + interval '0.05 seconds', 200, 40 + g % 200 FROM k WHERE status <> 'PENDING'
), n AS (
  INSERT INTO notifications (id, executor_id, requisite_id, amount, text, received_at, parsed_bank, status, payment_id,
                             candidate_payment_id, dedupe_key, resolved_note, created_at)
  SELECT (key || substr(md5('hist-n-' || g), 9))::uuid, executor_id, requisite_id, amount,
         'Zachislenie ' || amount || ' RUB, karta *' || right(req_value, 4), ended - interval '2 seconds', bank, 'matched', id,
         NULL, decode(md5('hist-n-' || g), 'hex'), NULL, ended
    FROM k WHERE status = 'COMPLETED'
  UNION ALL
  SELECT (key || substr(md5('hist-n-' || g), 9))::uuid, executor_id, requisite_id, amount,
         'Zachislenie ' || amount || ' RUB, karta *' || right(req_value, 4), ended + interval '20 minutes', bank, 'resolved', NULL,
         id, decode(md5('hist-n-' || g), 'hex'), 'payer paid after expiry; refunded', ended + interval '21 minutes'
    FROM k WHERE status = 'CANCELLED' AND g % 200 = 1
), dm AS (
  INSERT INTO device_messages (device_id, executor_id, text, sender, received_at, status, amount, currency, digits, parsed_bank,
                               requisite_id, notification_id, dedupe_key, created_at)
  SELECT device_id, executor_id, 'Zachislenie ' || amount || ' RUB, karta *' || right(req_value, 4), '900',
         ended - interval '2 seconds', 'matched', amount, 'RUB', right(req_value, 4), bank, requisite_id,
         (key || substr(md5('hist-n-' || g), 9))::uuid, decode(md5('hist-d-' || g), 'hex'), ended
    FROM k WHERE status = 'COMPLETED' AND device_id IS NOT NULL
)
SELECT count(*)::int AS payments,
       count(*) FILTER (WHERE status = 'COMPLETED')::int AS completed,
       count(*) FILTER (WHERE status = 'CANCELLED')::int AS cancelled,
       count(*) FILTER (WHERE status = 'CANCELLED' AND g % 200 = 1)::int AS late,
       count(*) FILTER (WHERE status = 'COMPLETED' AND device_id IS NOT NULL)::int AS phoned,
       count(*) FILTER (WHERE status = 'COMPLETED' AND reward = 0)::int AS unrewarded
  FROM k`;

/**
 * One retired phone for every other executor (by id), so that its notifications came with the
 * bank's messages; retired (revoked) so that no silence rule watches it now.
 */
async function addPhones(client: pg.Client): Promise<void> {
  await client.query(
    `INSERT INTO devices (executor_id, name, token_hash, created_at, last_seen_at, revoked_at)
     SELECT e.id, 'Old phone', decode(md5('hist-device-' || e.id), 'hex'), now() - interval '400 days', now() - interval '1 day', now() - interval '1 day'
       FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM executors) e
      WHERE e.n % 2 = 1 AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.executor_id = e.id)`,
  );
}

/** Inserts the history (see the module's comment); returns how long it took and what it wrote. */
export async function insertHistory(url: string, options: HistoryOptions): Promise<HistoryResult> {
  const { rows, days } = options;
  const chunk = options.chunk ?? 50_000;
  const workers = options.workers ?? 2;
  const started = Date.now();
  const setup = new pg.Client({ connectionString: url });
  setup.on('error', () => undefined);
  await setup.connect();
  let shape: Shape;
  let end: Date;
  try {
    await addPhones(setup);
    shape = await readShape(setup);
    // The system accounts' totals (migration 056) cover the entries before their `upto`, which
    // the service's job moves on every minute. The history ends an hour before it (its last
    // payments' postings, up to 15 minutes after them, too), so that its fee entries are added
    // to the totals below, once, and no roll-up meets them.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      end = new Date((await rollUpSystemTotals(pool)).getTime() - 3_600_000);
    } finally {
      await pool.end();
    }
  } finally {
    await setup.end();
  }
  const step = (days * 86_400) / rows;
  const counts: Record<string, number> = {};
  let next = 1;
  let done = 0;
  const clients: pg.Client[] = [];
  const worker = async () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
    await client.query('SET session_replication_role = replica');
    // Each chunk commits on its own; losing the last ones in a crash loses nothing (the run is over).
    await client.query('SET synchronous_commit = off');
    // The chunk's statement is costed far above what it does (its CTEs): JIT would compile it
    // each time for longer than a good part of its run (1.8 s of CPU for 20 000 payments).
    await client.query('SET jit = off');
    await client.query('CREATE TEMP TABLE history_moves (account_id uuid NOT NULL, amount numeric NOT NULL)');
    while (next <= rows) {
      const from = next;
      const to = Math.min(rows, from + chunk - 1);
      next = to + 1;
      const { rows: written } = await client.query<Record<string, number>>(CHUNK_SQL, [
        from,
        to,
        rows,
        step,
        end,
        shape.terminals.ids,
        shape.terminals.merchants,
        shape.terminals.accounts,
        shape.terminals.payinRates,
        shape.requisites.ids,
        shape.requisites.values,
        shape.requisites.banks,
        shape.requisites.executors,
        shape.requisites.available,
        shape.requisites.frozen,
        shape.requisites.rewards,
        shape.requisites.devices,
        shape.feeAccount,
      ]);
      const w = written[0]!;
      const ended = w.completed! + w.cancelled!;
      const add = (table: string, n: number) => {
        counts[table] = (counts[table] ?? 0) + n;
      };
      add('payments', w.payments!);
      add('ledger_transactions', w.payments! + ended);
      // hold: 2; release: 2; pay-in: frozen, terminal, fee and the reward (none when it is 0)
      add('ledger_entries', 2 * w.payments! + 2 * w.cancelled! + 4 * w.completed! - w.unrewarded!);
      add('webhook_events', ended);
      add('webhook_attempts', ended);
      add('notifications', w.completed! + w.late!);
      add('device_messages', w.phoned!);
      done += to - from + 1;
      const seconds = (Date.now() - started) / 1000;
      options.progress?.(
        `  history: ${done.toLocaleString('en')} / ${rows.toLocaleString('en')} payments in ${seconds.toFixed(0)} s (${Math.round(done / seconds).toLocaleString('en')}/s)`,
      );
    }
  };
  try {
    await Promise.all(Array.from({ length: workers }, worker));
    // The accounts' balances move by what the history's entries moved them (terminal and
    // executor accounts keep their balance; the system's are summed from their entries), one
    // session after the other, in one transaction each.
    // The platform's fee account keeps no balance: its entries go to its rolled-up total instead.
    for (const client of clients) {
      await client.query(
        `WITH m AS (SELECT account_id, sum(amount) AS amount FROM history_moves GROUP BY account_id),
              balances AS (
                UPDATE ledger_accounts a SET balance = a.balance + m.amount
                  FROM m WHERE a.id = m.account_id AND (a.terminal_id IS NOT NULL OR a.executor_id IS NOT NULL))
         UPDATE ledger_account_totals t SET total = t.total + m.amount FROM m WHERE t.account_id = m.account_id`,
      );
    }
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
  return { seconds: (Date.now() - started) / 1000, counts };
}
