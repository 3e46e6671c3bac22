import { type Db, prepared, type Queryable, queryPrepared, type Tx } from '../../db/pool.js';
import { TRAFFIC_CLASSES, type TrafficClass } from '../../risk/pool-rules.repo.js';
import { PAYMENT_VIEW_COLUMNS, type PaymentView, translateInsertError } from '../payments.repo.js';
import type { Candidate, NewPayment } from './cascade.js';

/*
 * The cascade's SQL: the creation facts, the `window` mode (payment_create_window and, for several
 * creates at once, payment_create_windows — their one current text is in src/db/functions/), the
 * `all` and `wait` statement, and the rule a requisite must fit (REQUISITE_FITS, DEPOSIT_COVERS),
 * which payment_create_window writes again: test/cascade.fit.test.ts keeps the two in agreement.
 */

/**
 * The creation facts as SQL over the given placeholders (one row: same_amount, ext_id_taken and
 * the client_id window's client_count, client_sum, client_refused): payment_creation_facts
 * (src/db/functions/payment_creation_facts.sql) takes the terminal-and-amount lock and, under a
 * client_id limit, the payer's lock, both held to the end of the transaction, then reads the facts
 * on snapshots taken after them, so they are exact.
 */
function factsSql(merchantId: string, terminalId: string, extId: string, amount: string, currency: string, client: readonly string[]): string {
  return `SELECT same_amount, ext_id_taken, client_count, client_sum, client_refused
            FROM payment_creation_facts(${merchantId}, ${terminalId}, ${extId}, ${amount}, ${currency}, ${client.join(', ')})`;
}

/** The facts' client_id parameters: the payer's client_id and the limit's window, count and amount. */
function clientParams(p: Pick<NewPayment, 'clientId' | 'clientLimit'>): [string | null, number | null, number | null, string | null] {
  const limit = p.clientId === null ? null : p.clientLimit;
  return [p.clientId, limit?.windowSeconds ?? null, limit?.maxPayments ?? null, limit?.maxAmount ?? null];
}

/** The creation facts, under the terminal-and-amount lock (and the payer's, under a client_id limit) for the rest of `tx`. */
export async function creationFacts(
  tx: Tx,
  p: Pick<NewPayment, 'merchantId' | 'terminalId' | 'extId' | 'amount' | 'currency' | 'clientId' | 'clientLimit'>,
): Promise<CreationFacts> {
  const { rows } = await tx.query<CreationFacts>(
    prepared(factsSql('$1', '$2', '$3', '$4', '$5', ['$6::text', '$7::integer', '$8::integer', '$9::numeric']), [
      p.merchantId,
      p.terminalId,
      p.extId,
      p.amount,
      p.currency,
      ...clientParams(p),
    ]),
  );
  return rows[0]!;
}

/** What the rules every create shares found, seen after the terminal-and-amount lock. */
export interface CreationFacts {
  /** PENDING payments of this terminal with this amount and currency. */
  same_amount: number;
  /** The merchant already has a payment with this ext_id. */
  ext_id_taken: boolean;
  /** Under a client_id limit: the payer's payments in the window before this one (else null). */
  client_count: number | null;
  /** Under a client_id limit: their amounts' sum, in the order currency (else null). */
  client_sum: string | null;
  /** This create would take the payer's window past the client_id limit. */
  client_refused: boolean;
}

/**
 * How the cascade walks the pool. `window`: the WINDOW least recently used requisites of the one
 * currency and type, in order, locking the first that fits and skipping those other creates hold
 * (the common case, a few index entries per create). `all`: every candidate currency, country and
 * type at once, sorted — cross-border payments, several requisite types, or nothing fitting in
 * the window. `wait` is `all` that waits for held requisites instead of skipping them.
 */
export type CascadeMode = 'window' | 'all' | 'wait';

/** Requisites the `window` mode looks at before the caller falls back to `all`. */
export const CASCADE_WINDOW = 100;

/**
 * The cascade (DESIGN.md; issue "The cascade"), in one statement or, in `window` mode, one call of
 * payment_create_window (migration 010): checks the creation rules
 * (ext_id not taken, fewer than `sameAmountLimit` PENDING payments of this amount), then picks the
 * active requisite of an active, unpaused executor — highest executor priority first, then
 * highest executor score, then least recently used — that has room under its limits, serves the method with a
 * fitting type, currency, country, bank and min/max for the amount the payer would pay there, and
 * that has no PENDING payment of that amount; marks it used and inserts the payment. Run on its
 * own (autocommit), it is one transaction; the facts are exact (see factsSql).
 *
 * A requisite another create is holding is passed over (SKIP LOCKED) except in `wait` mode,
 * which the caller uses when everything fitting was held, instead of answering "no requisites".
 * Two creates that still end up with one requisite and one amount are stopped by the unique index
 * payments_pending_requisite_amount.
 *
 * The payment is undefined when a rule failed (see `facts`) or no requisite fits in this mode.
 */
export async function insertPaymentWithCascade(db: Db, p: NewPayment, mode: CascadeMode, sameAmountLimit: number): Promise<CascadeOutcome> {
  try {
    return await runCascade(db, p, mode, sameAmountLimit);
  } catch (err) {
    throw translateInsertError(err, p.extId);
  }
}

async function runCascade(db: Db, p: NewPayment, mode: CascadeMode, sameAmountLimit: number): Promise<CascadeOutcome> {
  if (mode === 'window') {
    if (p.candidates.length !== 1 || p.types.length !== 1) throw new Error('the window cascade takes one candidate of one type');
    // payment_create_window (migration 010): its steps each read a snapshot of their own, so
    // that requisites other creates took meanwhile are not walked as if free.
    const c = p.candidates[0]!;
    const { rows } = await queryPrepared<CascadeRow>(
      db,
      `SELECT * FROM payment_create_window($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
         $21, $22, true, $23, $24, $25, $26)`,
      [c.currency, c.country, p.types[0], c.payerAmount, ...cascadeParams(p, sameAmountLimit), CASCADE_WINDOW, p.rateRefreshId, ...clientParams(p).slice(1)],
    );
    return cascadeResult(rows[0]!, p);
  }
  const { rows } = await queryPrepared<CascadeRow>(db, cascadeSql(mode), [
    p.candidates.map((c) => c.currency),
    p.candidates.map((c) => c.country),
    p.candidates.map((c) => c.payerAmount),
    p.types,
    ...cascadeParams(p, sameAmountLimit),
    p.rateRefreshId,
    ...clientParams(p).slice(1),
  ]);
  return cascadeResult(rows[0]!, p);
}

/** A cascade's one row: the creation facts and, when `created`, the payment. */
type CascadeRow = PaymentView & CreationFacts & { created: boolean; busy?: boolean };

/** What a `window` cascade came to: the facts and the payment (see insertPaymentWithCascade). */
export type CascadeOutcome = { facts: CreationFacts; payment: PaymentView | undefined };

/**
 * `window` cascades of several payments in one statement and one transaction:
 * payment_create_windows (migration 034), each create as insertPaymentWithCascade's `window`
 * would do it, except that none waits for a lock: a requisite whose executor's balance row another
 * transaction holds is passed over, and a create that would have waited for its terminal-and-amount
 * lock, or found no requisite it could take without waiting, comes back `busy` (undefined here),
 * with nothing of it kept, for the caller to run on its own. Each payment is one candidate of one type (the `window` mode). Throws when the statement
 * failed, which rolled back every create in it.
 */
export async function insertWindowBatch(db: Db, payments: NewPayment[], sameAmountLimit: number): Promise<(CascadeOutcome | undefined)[]> {
  const column = <T>(pick: (p: NewPayment, c: Candidate) => T): T[] => payments.map((p) => pick(p, p.candidates[0]!));
  for (const p of payments) {
    if (p.candidates.length !== 1 || p.types.length !== 1) throw new Error('the window cascade takes one candidate of one type');
  }
  const { rows } = await queryPrepared<CascadeRow & { item: number }>(
    db,
    `SELECT * FROM payment_create_windows($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::text[],
       $7::uuid[], $8::uuid[], $9::text[], $10::numeric[], $11::text[], $12::numeric[], $13::numeric[], $14::boolean[], $15::text[],
       $16::text[], $17::text[], $18::text[], $19::integer[], $20, $21::numeric[], $22, $23::bigint[], $24::integer[], $25::integer[],
       $26::numeric[])`,
    [
      column((_, c) => c.currency),
      column((_, c) => c.country),
      column((p) => p.types[0]),
      column((_, c) => c.payerAmount),
      column((p) => p.method),
      column((p) => p.bank),
      column((p) => p.merchantId),
      column((p) => p.terminalId),
      column((p) => p.extId),
      column((p) => p.amount),
      column((p) => p.currency),
      column((p) => p.rate),
      column((p) => p.payinRate),
      column((p) => p.crossBorder),
      column((p) => p.clientId),
      column((p) => p.notifyUrl),
      column((p) => p.notificationToken),
      column((p) => p.pageToken),
      column((p) => p.ttlSeconds),
      sameAmountLimit,
      column((p) => p.hold),
      CASCADE_WINDOW,
      column((p) => p.rateRefreshId),
      column((p) => clientParams(p)[1]),
      column((p) => clientParams(p)[2]),
      column((p) => clientParams(p)[3]),
    ],
  );
  const outcomes: (CascadeOutcome | undefined)[] = payments.map(() => undefined);
  for (const { item, busy, ...row } of rows) {
    if (!busy) outcomes[item - 1] = cascadeResult(row, payments[item - 1]!);
  }
  return outcomes;
}

/** The cascade's parameters from $5 on, in both forms (the statement and payment_create_window). */
function cascadeParams(p: NewPayment, sameAmountLimit: number): unknown[] {
  return [
    p.method,
    p.bank,
    p.merchantId,
    p.terminalId,
    p.extId,
    p.amount,
    p.currency,
    p.rate,
    p.payinRate,
    p.crossBorder,
    p.clientId,
    p.notifyUrl,
    p.notificationToken,
    p.pageToken,
    p.ttlSeconds,
    sameAmountLimit,
    p.hold,
  ];
}

function cascadeResult(row: CascadeRow, p: NewPayment): CascadeOutcome {
  const { same_amount, ext_id_taken, client_count, client_sum, client_refused, created, busy: _busy, ...payment } = row;
  return {
    facts: { same_amount, ext_id_taken, client_count, client_sum, client_refused },
    payment: created ? { ...payment, terminal_name: p.terminalName } : undefined,
  };
}

/**
 * The requisite `r` fits the candidate `c` and may be handed out: active, its executor taking
 * payments (executor_open, the executor's state copied under the requisites' locks, migration
 * 019), type ($4), method ($5), bank ($6), min/max for what the payer pays there, no PENDING
 * payment of that amount on it, and, when a limit applies to it (`limited`, migration 025), room
 * under its limits (requisite_limits_allow).
 */
const REQUISITE_FITS = `r.is_active AND r.executor_open AND r.type = ANY($4::text[])
          AND $5::text = ANY(r.methods)
          AND ($6::text IS NULL OR r.bank_code = $6)
          AND c.payer_amount >= r.min_amount
          AND (r.max_amount IS NULL OR c.payer_amount <= r.max_amount)
          AND NOT EXISTS (SELECT 1 FROM payments q
                           WHERE q.requisite_id = r.id AND q.status = 'PENDING' AND q.payer_amount = c.payer_amount)
          AND (NOT r.limited OR requisite_limits_allow(r.id, c.payer_amount))`;

/**
 * The pool's risk rules as the `all` and `wait` statement reads them (migration 048): the payer's
 * class (merchant $7, client_id $15) and the requisite velocity, one row.
 */
const RISK_SQL = `SELECT payer_class($7, $15) AS cls, requisite_max_count, requisite_count_seconds, requisite_max_amount, requisite_amount_seconds
       FROM risk_pool_rules`;

/**
 * The requisite `r` takes the payer's class (its own classes and its executor's) and, on this
 * statement's snapshot, has room under the requisite velocity (migration 048); see
 * payment_create_window, which writes the same rule.
 */
const POOL_RULES_FIT = `(SELECT requisite_takes_class(r.traffic_classes, r.executor_traffic_classes, k.cls)
               AND (k.requisite_max_count IS NULL AND k.requisite_max_amount IS NULL
                    OR requisite_velocity_allows(r.id, r.executor_id, c.payer_amount, k.requisite_max_count, k.requisite_count_seconds,
                                                 k.requisite_max_amount, k.requisite_amount_seconds))
             FROM risk k)`;

/** The velocity of the requisite picked, checked again once it is held (requisite_velocity_take). */
const VELOCITY_TAKE = `(SELECT requisite_velocity_take(pick.id, pick.executor_id, pick.payer_amount, k.requisite_max_count, k.requisite_count_seconds,
                                               k.requisite_max_amount, k.requisite_amount_seconds) FROM risk k)`;

/** The executor of requisite `r` can cover the hold ($21): available balance plus credit line. */
const DEPOSIT_COVERS = `EXISTS (SELECT 1 FROM ledger_accounts a
                       WHERE a.executor_id = r.executor_id AND a.kind = 'executor_available' AND a.balance - $21::numeric >= a.min_balance)`;

/** The cascade statements of the `all` and `wait` modes, built once each. */
const cascadeTexts = new Map<CascadeMode, string>();

/** The cascade statement of `mode` (`all` or `wait`; `window` is payment_create_window). */
function cascadeSql(mode: CascadeMode): string {
  const cached = cascadeTexts.get(mode);
  if (cached) return cached;
  // Every choice of plan here is fixed by the statement's shape, not left to the estimates: a
  // cached generic plan outlives the statistics it was made from. The pool is sorted; it is the
  // fallback for when the window holds nothing that fits, and the one walk for cross-border
  // payments and several requisite types. The requisite conditions and the order are those of
  // payment_create_window (migration 025): change both together — test/cascade.fit.test.ts runs
  // both on the same generated pools and fails when their choices differ. The facts come first, as a one-time filter: nothing is
  // looked at, locked or written when a rule failed.
  const pick = `
       SELECT r.id, r.executor_id, r.limited, c.payer_amount, uuid_v7() AS payment_id
         FROM candidate c
         JOIN requisites r ON r.currency = c.currency AND r.country = c.country
        WHERE (SELECT NOT f.ext_id_taken AND NOT f.client_refused AND f.same_amount < $20 FROM facts f)
          AND ${REQUISITE_FITS}
          AND ${POOL_RULES_FIT}
          AND ${DEPOSIT_COVERS}
        ORDER BY r.executor_priority DESC, r.executor_score DESC, r.last_used_at NULLS FIRST, r.id
        LIMIT 1
        FOR NO KEY UPDATE OF r ${mode === 'wait' ? '' : 'SKIP LOCKED'}`;
  const text = `WITH candidate AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[]) AS c(currency, country, payer_amount)
     ), facts AS (${factsSql('$7', '$8', '$9', '$10', '$11', ['$15', '$23::integer', '$24::integer', '$25::numeric'])}), risk AS (${RISK_SQL}), pick AS (${pick}
     ), held AS (
       -- The hold (migration 017), before anything else is written: false when a concurrent
       -- create took the executor's balance since this statement's snapshot.
       -- A hand-out held is then counted towards the requisite's limits (migration 019), which
       -- fails the statement (requisite_usage_within_limit) when a concurrent create took the room.
       -- The requisite velocity again, on a snapshot taken now that the requisite is held
       -- (migration 048): past it, the statement fails as a requisite past its limit does.
       SELECT pick.*,
              CASE WHEN NOT ${VELOCITY_TAKE} THEN false
                   WHEN executor_hold_take(pick.payment_id, $7, pick.executor_id, $21)
                   THEN NOT pick.limited OR requisite_usage_take(pick.id, pick.payer_amount) ELSE false END AS ok
         FROM pick
     ), used AS (
       UPDATE requisites r SET last_used_at = clock_timestamp()
         FROM held WHERE r.id = held.id AND held.ok
       RETURNING r.*, held.payer_amount, held.payment_id
     ), inserted AS (
       INSERT INTO payments (id, merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate,
                             requisite_id, executor_id, hold, req_type, req_value, req_bank_code, req_holder, req_country, req_currency,
                             payer_amount, cross_border, client_id, notify_url, notification_token, page_token, valid_until,
                             rate_refresh_id, payer_class)
       SELECT u.payment_id, $7, $8, $9, $10, $11, $5, 'PENDING', $12, $13,
              u.id, u.executor_id, $21, u.type, u.value, u.bank_code, u.holder, u.country, u.currency,
              u.payer_amount, $14, $15, $16, $17, $18, now() + make_interval(secs => $19), $22::bigint, (SELECT cls FROM risk)
         FROM used u
       RETURNING *
     )
     SELECT f.same_amount, f.ext_id_taken, f.client_count, f.client_sum, f.client_refused, i.id IS NOT NULL AS created, ${PAYMENT_VIEW_COLUMNS.map((c) => `i.${c}`).join(', ')},
            b.name AS req_bank_name
       FROM facts f LEFT JOIN inserted i ON true LEFT JOIN banks b ON b.code = i.req_bank_code`;
  cascadeTexts.set(mode, text);
  return text;
}

/** What a refused create's pool would have offered, and why it did not (see refusalShortfall). */
export interface RefusalShortfall {
  /** Requisites that fit but whose executors' deposits (available balance plus credit line) are below the hold. */
  uncovered: number;
  /** The payer's class (migration 048). */
  cls: TrafficClass;
  /** Requisites that fit every other rule but do not take the payer's class. */
  classExcluded: number;
  /** Requisites that fit every other rule and take the class, but are past the requisite velocity. */
  velocityExcluded: number;
  /** Every class some class-excluded requisite takes, for the figure. */
  takenClasses: TrafficClass[];
  /** The requisite velocity in words ('3 in 600 s, 50000.00 in 3600 s'), for the figure. */
  velocity: string;
}

/**
 * After the cascade found nothing, in one statement (off the fast path: only for a create
 * already refused): how many requisites would have fitted but for their executors' deposits, so
 * that PAY_004 can say what the operator should do; and, for the operator alone, how many but for
 * the payer's traffic class and how many but for the requisite velocity (migration 048).
 */
export async function refusalShortfall(
  db: Queryable,
  p: Pick<NewPayment, 'candidates' | 'types' | 'method' | 'bank' | 'hold' | 'merchantId' | 'clientId'>,
): Promise<RefusalShortfall> {
  const { rows } = await db.query<{
    uncovered: number;
    cls: TrafficClass;
    class_excluded: number;
    velocity_excluded: number;
    taken: TrafficClass[] | null;
    velocity: string;
  }>(
    `WITH candidate AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[]) AS c(currency, country, payer_amount)
     ), k AS (
       SELECT payer_class($8, $9) AS cls, requisite_max_count, requisite_count_seconds, requisite_max_amount, requisite_amount_seconds
         FROM risk_pool_rules
     ), fitting AS (
       SELECT r.id, r.traffic_classes, r.executor_traffic_classes,
              bool_or(NOT ${DEPOSIT_COVERS.replaceAll('$21', '$7')}) AS uncovered,
              bool_or(requisite_takes_class(r.traffic_classes, r.executor_traffic_classes, k.cls)) AS takes,
              bool_or(k.requisite_max_count IS NULL AND k.requisite_max_amount IS NULL
                      OR requisite_velocity_allows(r.id, r.executor_id, c.payer_amount, k.requisite_max_count, k.requisite_count_seconds,
                                                   k.requisite_max_amount, k.requisite_amount_seconds)) AS fast_enough
         FROM candidate c
         JOIN requisites r ON r.currency = c.currency AND r.country = c.country
        CROSS JOIN k
        WHERE ${REQUISITE_FITS}
        GROUP BY r.id
     )
     SELECT count(*) FILTER (WHERE uncovered)::int AS uncovered,
            (SELECT cls FROM k) AS cls,
            count(*) FILTER (WHERE NOT takes)::int AS class_excluded,
            count(*) FILTER (WHERE takes AND NOT fast_enough)::int AS velocity_excluded,
            (SELECT array_agg(DISTINCT x ORDER BY x) FROM fitting f, unnest(ARRAY['new', 'returning', 'trusted']) AS x
              WHERE NOT f.takes AND requisite_takes_class(f.traffic_classes, f.executor_traffic_classes, x)) AS taken,
            (SELECT concat_ws(', ', requisite_max_count || ' in ' || requisite_count_seconds || ' s',
                              requisite_max_amount || ' in ' || requisite_amount_seconds || ' s') FROM k) AS velocity
       FROM fitting`,
    [
      p.candidates.map((c) => c.currency),
      p.candidates.map((c) => c.country),
      p.candidates.map((c) => c.payerAmount),
      p.types,
      p.method,
      p.bank,
      p.hold,
      p.merchantId,
      p.clientId,
    ],
  );
  const row = rows[0]!;
  const order: readonly string[] = TRAFFIC_CLASSES;
  return {
    uncovered: row.uncovered,
    cls: row.cls,
    classExcluded: row.class_excluded,
    velocityExcluded: row.velocity_excluded,
    takenClasses: (row.taken ?? []).sort((a, b) => order.indexOf(a) - order.indexOf(b)),
    velocity: row.velocity,
  };
}
