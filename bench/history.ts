/**
 * The history of bench figure (d) (issue 38): `rows` payments as a long-running installation
 * accumulates them, with what each left behind in the other growing tables, inserted with SQL
 * (set-based INSERT … SELECT over generate_series, in chunks, over two connections), with every
 * index in place at the end (the point is to measure creates and the console against real indexes):
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
 * The secondary indexes the history fills are built once it is in (see HISTORY_TABLES), not
 * maintained row by row: the same indexes, with the same entries, at the end.
 *
 * Rows reference each other by ids derived from the row's number, so one statement writes a chunk
 * of every table; each id is a version 7 uuid of the time its row was made (migration 060: the
 * milliseconds first, then md5-random bits), and each page token the time then 32 random-looking
 * characters (src/lib/ids.ts), as production makes them since 2026-11-28; the foreign-key and other
 * triggers are off for these sessions (session_replication_role = replica: the rows reference
 * existing rows by construction, and the ledger's deferred balance check would check what is
 * balanced by construction). Through the tables' own names only (plain INSERT … SELECT), so the
 * generator works as well on partitioned tables.
 */
import pg from 'pg';
import { rollUpSystemTotals } from '../src/ledger/system-totals.js';
import { resetDashboardRollup } from '../src/reports/dashboard.rollup.js';

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
  /** Of which building the secondary indexes afterwards. */
  indexSeconds: number;
  /** The indexes built afterwards. */
  indexes: number;
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

const PAYMENT_COLUMNS = `id, merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate,
  requisite_id, executor_id, hold, req_type, req_value, req_bank_code, req_holder, req_country, req_currency,
  payer_amount, cross_border, client_id, notify_url, page_token, valid_until, cancel_reason,
  created_at, updated_at, completed_at, received_amount`;

/**
 * The SQL of a version 7 uuid of the instant `at` (an SQL expression), as the database's
 * uuid_v7(at) (migration 060) makes it at that instant — the milliseconds, the version, the
 * sub-millisecond fraction, the variant — but with its random bits from md5(seed): the history's
 * rows refer to each other by ids derived from the row's number, and each row's id is ordered by
 * the time it was made, as production's are (docs/performance.md "Time-ordered ids").
 */
function v7(at: string, seed: string): string {
  return `(lpad(to_hex(floor(extract(epoch FROM ${at}) * 1000)::bigint), 12, '0') || '7'
     || lpad(to_hex((extract(epoch FROM ${at}) * 1000000)::bigint % 1000 * 4096 / 1000), 3, '0')
     || substr('89ab', 1 + get_byte(decode(md5(${seed}), 'hex'), 0) % 4, 1) || substr(md5(${seed}), 3, 15))::uuid`;
}

/**
 * One chunk, payments $1..$2 of $3, in one statement. Row g is created at now − ($3 − g) × $4
 * seconds ($5 = the end of the history, an hour before the system totals' upto): the last row is the newest.
 */
const CHUNK_SQL = `
WITH g AS MATERIALIZED (
  SELECT g, ${v7('at', "'hist-p-' || g")} AS id,
         -- the payment page's token as src/lib/ids.ts pageToken() makes it: the time, then 32 characters as random as 24 bytes
         lpad(to_hex(floor(extract(epoch FROM at) * 1000)::bigint), 12, '0')
           || translate(encode(substring(sha256(convert_to('hist-t-' || g, 'UTF8')) FROM 1 FOR 24), 'base64'), '+/', '-_') AS page_token,
         -- the cascade hands out the cards in turn, so one card's payments are spread over time and
         -- over the terminals, not bunched: a hash of the row's number picks the card
         1 + g % cardinality($6::uuid[]) AS ti, 1 + (hashint8(g) & 2147483647) % cardinality($10::uuid[]) AS ri,
         at,
         CASE WHEN g % 10000 = 0 THEN 'PENDING' WHEN (hashint8(-g) & 2147483647) % 100 < 60 THEN 'CANCELLED' ELSE 'COMPLETED' END AS status,
         round((100 + (g::bigint * 7919) % 299900)::numeric + (g % 100) / 100.0, 2) AS amount
    FROM generate_series($1::bigint, $2::bigint) g,
         LATERAL (SELECT $5::timestamptz - make_interval(secs => ($3::bigint - g) * $4::float8) AS at) a
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
), pv AS (
  SELECT v.id, v.merchant_id, v.terminal_id, 'hist-' || v.g, v.amount, 'RUB', 'CARD', v.status, 95.5, v.payin_rate,
         v.requisite_id, v.executor_id, v.hold, 'card', v.req_value, v.bank, 'Ivan I.', 'RU', 'RUB',
         v.amount, false, 'client-' || (v.g % 50000), 'https://shop.example/kassir/hook', v.page_token,
         CASE WHEN v.status = 'PENDING' THEN $5::timestamptz + interval '1 day' ELSE v.at + interval '15 minutes' END,
         CASE WHEN v.status = 'CANCELLED' THEN 'expired' END,
         v.at, coalesce(v.ended, v.at),
         CASE WHEN v.status = 'COMPLETED' THEN v.ended END,
         CASE WHEN v.status = 'COMPLETED' THEN v.amount END
    FROM v
), p AS (
  -- the ended ones: their ext_id and page token are the history's own, so nothing can conflict
  -- (ON CONFLICT would probe every unique index before each insert, and log each row twice)
  INSERT INTO payments (${PAYMENT_COLUMNS}) SELECT * FROM pv WHERE status <> 'PENDING'
  RETURNING id
), pp AS (
  -- a PENDING row that meets a live payment's (requisite, amount) is left out, and with it its rows below
  INSERT INTO payments (${PAYMENT_COLUMNS}) SELECT * FROM pv WHERE status = 'PENDING'
  ON CONFLICT DO NOTHING
  RETURNING id
), k AS MATERIALIZED (
  SELECT v.*, ${v7('v.at', "'hist-h-' || v.g")} AS hold_tx, ${v7('v.ended', "'hist-s-' || v.g")} AS end_tx,
         round(v.hold * (1 - v.payin_rate / 100), 6) AS net, round(v.hold * v.reward_rate / 100, 6) AS reward
    FROM v JOIN (SELECT id FROM p UNION ALL SELECT id FROM pp) p USING (id)
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
  SELECT ${v7('ended', "'hist-w-' || g")}, merchant_id, 'payment', id, 'payment.' || lower(status),
         jsonb_build_object('id', id, 'ext_id', 'hist-' || g, 'status', status, 'amount', amount::text, 'currency', 'RUB',
                            'received_amount', CASE WHEN status = 'COMPLETED' THEN amount::text END),
         'https://shop.example/kassir/hook', 'delivered', 1, ended, ended, ended + interval '0.2 seconds'
    FROM k WHERE status <> 'PENDING'
), wa AS (
  INSERT INTO webhook_attempts (event_id, attempt, started_at, status_code, latency_ms)
  SELECT ${v7('ended', "'hist-w-' || g")}, 1, ended + interval '0.05 seconds', 200, 40 + g % 200 FROM k WHERE status <> 'PENDING'
), n AS (
  INSERT INTO notifications (id, executor_id, requisite_id, amount, text, received_at, parsed_bank, status, payment_id,
                             candidate_payment_id, dedupe_key, resolved_note, created_at)
  SELECT ${v7('ended', "'hist-n-' || g")}, executor_id, requisite_id, amount,
         'Zachislenie ' || amount || ' RUB, karta *' || right(req_value, 4), ended - interval '2 seconds', bank, 'matched', id,
         NULL, decode(md5('hist-n-' || g), 'hex'), NULL, ended
    FROM k WHERE status = 'COMPLETED'
  UNION ALL
  SELECT ${v7("ended + interval '21 minutes'", "'hist-n-' || g")}, executor_id, requisite_id, amount,
         'Zachislenie ' || amount || ' RUB, karta *' || right(req_value, 4), ended + interval '20 minutes', bank, 'resolved', NULL,
         id, decode(md5('hist-n-' || g), 'hex'), 'payer paid after expiry; refunded', ended + interval '21 minutes'
    FROM k WHERE status = 'CANCELLED' AND g % 200 = 1
), dm AS (
  INSERT INTO device_messages (device_id, executor_id, text, sender, received_at, status, amount, currency, digits, parsed_bank,
                               requisite_id, notification_id, dedupe_key, created_at)
  SELECT device_id, executor_id, 'Zachislenie ' || amount || ' RUB, karta *' || right(req_value, 4), '900',
         ended - interval '2 seconds', 'matched', amount, 'RUB', right(req_value, 4), bank, requisite_id,
         ${v7('ended', "'hist-n-' || g")}, decode(md5('hist-d-' || g), 'hex'), ended
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

/** The tables the history writes (and whose secondary indexes it builds afterwards). */
const HISTORY_TABLES = ['payments', 'ledger_transactions', 'ledger_entries', 'webhook_events', 'webhook_attempts', 'notifications', 'device_messages'];

/**
 * Indexes kept maintained while the history goes in, though no constraint needs them: the ones
 * the running service's jobs read every minute meanwhile, each filled by the history in time order
 * within a few key ranges (the cheap case). The ledger_totals job finds the transactions created
 * since its last run and their entries (ledger_transactions_created, ledger_entries_transaction);
 * the alerts job counts the payments of its last minutes (payments_created); the executors_score
 * job reads each executor's payments of 24 hours and 7 days (payments_executor_created). Without
 * them each run scans the tables the history is filling: with payments_executor_created built
 * afterwards (tried on 2026-11-28), one executors_score run planned while it was missing read
 * 100 executors × 10^6 payments for 107 s, into (d).
 */
const MAINTAINED = new Set(['ledger_transactions_created', 'ledger_entries_transaction', 'payments_created', 'payments_executor_created']);

interface DeferredIndex {
  name: string;
  /** The table (or partition) it is on. */
  table: string;
  /** pg_get_indexdef: `CREATE INDEX … ON ONLY parent …` for a partitioned table's index. */
  definition: string;
  /** The partitioned index it is a partition of, attached once built. */
  parent: string | null;
}

/**
 * An index on the open rows (PENDING payments, pending webhook events, unmatched or late
 * notifications, phone messages waiting for a person): the service's expiry, delivery and matching
 * read these while the history goes in, and the history leaves them nearly empty (its one
 * PENDING payment in 10,000 needs payments_pending_requisite_amount as its ON CONFLICT arbiter).
 */
const OPEN_ROWS = /'(PENDING|pending|unmatched|late|ambiguous|unreadable|DISPUTE|PROCESSING)'/;

/**
 * Drops the history tables' indexes that back no constraint, but the open rows' and MAINTAINED,
 * and returns what rebuilds them. Maintaining these entry by entry (amounts, card digits,
 * accounts, executors, client ids: keys not in insertion order) cost more than a sort and a build
 * per index afterwards: at 10^6 payments the history took 242 s with the builds against 322 s
 * (docs/performance.md "The history written faster"), and the indexes are the same, with the same
 * entries. Since 2026-11-28 ("10^7 within fifteen minutes") also the partial ones the history
 * fills (payments_client_created, payments_requisite_cancelled, ledger_transactions_once and
 * notifications_one_match_per_payment: unique ones, whose builds check what their maintenance
 * would have), read only by requests, which the service is not answering meanwhile. Kept: unique constraints and primary keys (the foreign keys' keys; filled
 * in key order anyway), MAINTAINED, and the partial indexes on OPEN_ROWS.
 */
async function dropSecondaryIndexes(client: pg.Client): Promise<DeferredIndex[]> {
  const { rows } = await client.query<DeferredIndex & { predicate: string }>(
    `SELECT ic.relname AS name, tc.oid::regclass::text AS table, pg_get_indexdef(i.indexrelid) AS definition,
            (SELECT p.inhparent::regclass::text FROM pg_inherits p WHERE p.inhrelid = i.indexrelid) AS parent,
            coalesce(pg_get_expr(i.indpred, i.indrelid), '') AS predicate
       FROM pg_index i
       JOIN pg_class ic ON ic.oid = i.indexrelid
       JOIN pg_class tc ON tc.oid = i.indrelid
      WHERE NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
        AND (tc.oid = ANY($1::regclass[])
             OR tc.oid IN (SELECT p.inhrelid FROM pg_inherits p WHERE p.inhparent = ANY($1::regclass[])))
      ORDER BY ic.relname`,
    [HISTORY_TABLES],
  );
  // A partition's index goes and comes with its parent's.
  const root = (index: DeferredIndex): string => {
    let name = index.name;
    for (let parent = index.parent; parent !== null; parent = rows.find((r) => r.name === parent)?.parent ?? null) name = parent;
    return name;
  };
  const deferred = rows.filter((index) => {
    const top = rows.find((r) => r.name === root(index));
    return top !== undefined && !OPEN_ROWS.test(top.predicate) && !MAINTAINED.has(top.name);
  });
  for (const index of deferred.filter((i) => i.parent === null)) await client.query(`DROP INDEX ${index.name}`);
  return deferred.map(({ name, table, definition, parent }) => ({ name, table, definition, parent }));
}

/**
 * How full a built index's leaves are left. A build packs them to 90 %; the same indexes filled
 * entry by entry, as production fills them and as this bench did before, ended 25–30 % bigger at
 * 10^6 payments (their leaves split as they filled: ~70 % full; the card digits' index 60 %), and a
 * create's insertions meet leaves with that much room. Built at 70 %, then the option reset, so
 * that their later splits are the default's.
 */
const BUILT_FILLFACTOR = 70;

/** An index's definition with a fillfactor (before its predicate, if it has one), unless it has storage options of its own. */
function withFillfactor(definition: string, fillfactor: number): string {
  if (definition.includes(' WITH (')) return definition;
  const where = definition.indexOf(' WHERE ');
  const at = where < 0 ? definition.length : where;
  return `${definition.slice(0, at)} WITH (fillfactor = ${fillfactor})${definition.slice(at)}`;
}

/**
 * Builds the dropped indexes again, as they were (names, definitions, partitions attached), over
 * `workers` connections, the biggest tables' first: on these 2 cores, two builds at once, one
 * core each, without parallel workers of their own.
 */
async function buildIndexes(url: string, indexes: DeferredIndex[], workers: number): Promise<void> {
  const sizes = new Map<string, number>();
  const setup = new pg.Client({ connectionString: url });
  setup.on('error', () => undefined);
  await setup.connect();
  try {
    // A partitioned table's index first as its parent's shell (`ON ONLY`: instant, invalid until
    // every partition's is attached).
    for (const index of indexes.filter((i) => i.definition.includes(' ON ONLY '))) await setup.query(index.definition);
    const { rows } = await setup.query<{ table: string; size: string }>(
      `SELECT t AS table, pg_relation_size(t::regclass)::text AS size FROM unnest($1::text[]) t`,
      [[...new Set(indexes.map((i) => i.table))]],
    );
    for (const row of rows) sizes.set(row.table, Number(row.size));
  } finally {
    await setup.end();
  }
  const queue = indexes.filter((i) => !i.definition.includes(' ON ONLY ')).sort((a, b) => (sizes.get(b.table) ?? 0) - (sizes.get(a.table) ?? 0));
  const worker = async () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query(`SET maintenance_work_mem = '1GB'`);
      await client.query('SET max_parallel_maintenance_workers = 0');
      for (let index = queue.shift(); index !== undefined; index = queue.shift()) {
        await client.query(withFillfactor(index.definition, BUILT_FILLFACTOR));
        if (!index.definition.includes(' WITH (')) await client.query(`ALTER INDEX ${index.name} RESET (fillfactor)`);
        if (index.parent !== null) await client.query(`ALTER INDEX ${index.parent} ATTACH PARTITION ${index.name}`);
      }
    } finally {
      await client.end();
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
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
  let deferred: DeferredIndex[];
  try {
    await addPhones(setup);
    shape = await readShape(setup);
    deferred = await dropSecondaryIndexes(setup);
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
    // A chunk's materialized CTEs and sorts hold 10–50 MB each (50,000 payments, 220,000 entries):
    // at the default 4 MB they went through temporary files.
    await client.query(`SET work_mem = '128MB'`);
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
  const built = Date.now();
  options.progress?.(`  history: building ${deferred.length} indexes`);
  await buildIndexes(url, deferred, workers);
  // The dashboard's roll-up (migration 063) sums the payments as they are created, behind an
  // instant no payment can be created before; the history's are written behind it, into minutes
  // already summed. Forgotten, it is summed again at its next run (the job's or a dashboard's).
  const rollupPool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await resetDashboardRollup(rollupPool);
  } finally {
    await rollupPool.end();
  }
  return { seconds: (Date.now() - started) / 1000, indexSeconds: (Date.now() - built) / 1000, indexes: deferred.length, counts };
}
