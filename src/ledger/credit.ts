import { Decimal } from 'decimal.js';
import { Money, USDT_DECIMALS } from '../lib/money.js';

export interface PayinCredit {
  /** What the payer's money is worth in USDT: amount / rate. */
  gross: Decimal;
  /** The merchant's share, credited to the terminal: amount / rate × (1 − payin_rate / 100). */
  net: Decimal;
  /** The service's fee: gross − net. */
  fee: Decimal;
}

/**
 * DESIGN.md decision 11: on completion the terminal is credited
 * `amount / rate × (1 − payin_rate / 100)` USDT, `rate` being the order currency's price of 1 USDT
 * fixed at creation. The net credit is computed from the formula in one go and rounded once,
 * half-up, to USDT's 6 decimals; the fee is whatever the rounded gross leaves, so the posting
 * always balances to the micro-USDT.
 */
export function creditForPayin(amount: Decimal.Value, rate: Decimal.Value, payinRate: Decimal.Value): PayinCredit {
  const a = positive(amount, 'amount');
  const r = positive(rate, 'rate');
  const p = percent(payinRate, 'payin_rate');
  const gross = a.div(r).toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP);
  const net = a
    .div(r)
    .mul(new Money(1).minus(p.div(100)))
    .toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP);
  return { gross, net, fee: gross.minus(net) };
}

export interface PayoutReserve {
  /** What the payout freezes on the terminal: amount / rate × (1 + payout_rate / 100). */
  reserve: Decimal;
  /** The service's fee, taken on completion: what the reserve holds beyond amount / rate. */
  fee: Decimal;
}

/**
 * DESIGN.md decision 12: a payout reserves `amount / rate × (1 + payout_rate / 100)` USDT,
 * `rate` being the price of 1 USDT in the payout's currency fixed at creation, rounded once,
 * half-up, to USDT's 6 decimals. The fee is what the reserve holds beyond amount / rate (itself
 * rounded the same way), so what leaves on completion plus the fee is exactly the reserve.
 */
export function payoutReserve(amount: Decimal.Value, rate: Decimal.Value, payoutRate: Decimal.Value): PayoutReserve {
  const a = positive(amount, 'amount');
  const r = positive(rate, 'rate');
  const p = percent(payoutRate, 'payout_rate');
  const base = a.div(r);
  const reserve = base.mul(new Money(1).plus(p.div(100))).toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP);
  return { reserve, fee: reserve.minus(base.toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP)) };
}

/** Half-up to USDT's 6 decimals. */
function usdt(value: Decimal): Decimal {
  return value.toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP);
}

/**
 * DESIGN.md "Executors' money": the hold a hand-out freezes on the executor, `amount / rate` in
 * USDT, 6 decimals half-up — the payment's order amount and its fixed rate.
 */
export function payinHold(amount: Decimal.Value, rate: Decimal.Value): Decimal {
  return usdt(positive(amount, 'amount').div(positive(rate, 'rate')));
}

export interface PayinSettlement extends PayinCredit {
  /** The executor's reward, credited to its available balance: gross × payin_reward / 100. */
  reward: Decimal;
  /** What the platform keeps: gross − net − reward (negative when the reward exceeds the fee). */
  revenue: Decimal;
}

/**
 * DESIGN.md "Executors' money", completion: the payer's money is worth `v = received / rate` USDT
 * (the gross of decision 11, which for a full payment is the hold); the executor owes it, the
 * terminal gets the net of decision 11, the executor is rewarded `v × payin_reward / 100` (6 dp
 * half-up) and the platform keeps the remainder — so the four parts always sum to v exactly.
 * A completion posts it from SQL (payin_settlement, src/db/functions/payment_complete.sql, one
 * round trip); this is the definition that SQL is held to (test/ledger.test.ts, 5,000 drawn
 * inputs) and the figures the other tests expect.
 */
export function payinSettlement(received: Decimal.Value, rate: Decimal.Value, payinRate: Decimal.Value, payinReward: Decimal.Value): PayinSettlement {
  const credit = creditForPayin(received, rate, payinRate);
  const reward = usdt(credit.gross.mul(percent(payinReward, 'payin_reward')).div(100));
  return { ...credit, reward, revenue: credit.gross.minus(credit.net).minus(reward) };
}

export interface PayoutSettlement {
  /** What the executor who paid the payout is credited: p × (1 + payout_reward / 100), p = amount / rate. */
  executorCredit: Decimal;
  /** What the platform keeps of the reserve: reserve − executorCredit. */
  revenue: Decimal;
}

/**
 * DESIGN.md "Executors' money", payouts: the executor paid the roubles from its own money, so on
 * completion it is credited `p × (1 + payout_reward / 100)` USDT (6 dp half-up), `p = amount /
 * rate`; the terminal's reserve (decision 12) pays it and the platform keeps the remainder.
 */
export function payoutSettlement(amount: Decimal.Value, rate: Decimal.Value, reserve: Decimal.Value, payoutReward: Decimal.Value): PayoutSettlement {
  const a = positive(amount, 'amount');
  const r = positive(rate, 'rate');
  const w = percent(payoutReward, 'payout_reward');
  const executorCredit = usdt(a.div(r).mul(new Money(1).plus(w.div(100))));
  return { executorCredit, revenue: new Money(reserve).minus(executorCredit) };
}

function positive(value: Decimal.Value, name: string): Decimal {
  const d = new Money(value);
  if (!d.isFinite() || d.lte(0)) throw new RangeError(`${name} must be positive`);
  return d;
}

/** A percentage in [0, 100). NaN compares false both ways, so it is refused explicitly (numeric columns can hold 'NaN'). */
function percent(value: Decimal.Value, name: string): Decimal {
  const d = new Money(value);
  if (d.isNaN() || d.lt(0) || d.gte(100)) throw new RangeError(`${name} must be in [0, 100)`);
  return d;
}
