/**
 * Property tests of the pay-in credit (DESIGN.md decision 11): the terminal gets
 * `amount / rate × (1 − payin_rate / 100)` USDT, rounded once, half up, to 6 decimals; the fee is
 * what the rounded gross leaves. Two oracles that share nothing with the implementation: decimal.js
 * at 100 digits with the formula regrouped, and exact integer arithmetic on BigInt.
 */
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { creditForPayin, payinHold, payinSettlement, payoutReserve, payoutSettlement } from './credit.js';

const Exact = Decimal.clone({ precision: 100, rounding: Decimal.ROUND_HALF_UP });

// The domain the service accepts: amounts with 2 decimals below 10^15 (payments.service.ts), rates
// with 8 decimals in (0, 10^11) (rates.service.ts), payin_rate with 4 decimals in [0, 100)
// (terminals.service.ts). Each is drawn as the integer count of its smallest unit.
const AMOUNT_UNITS = { min: 1n, max: 10n ** 17n - 1n };
const RATE_UNITS = { min: 1n, max: 10n ** 19n - 1n };
const PERCENT_UNITS = { min: 0, max: 999_999 };

const units = (n: bigint | number, places: number) => new Exact(n.toString()).div(10 ** places).toFixed();

/** Mostly everyday values (a shop's amounts, RUB/KZT-like rates), the whole domain the rest of the time. */
const arbAmountUnits = fc.oneof({ weight: 3, arbitrary: fc.bigInt({ min: 1n, max: 100_000_000n }) }, { weight: 1, arbitrary: fc.bigInt(AMOUNT_UNITS) });
const arbRateUnits = fc.oneof(
  { weight: 3, arbitrary: fc.bigInt({ min: 100_000_000n, max: 100_000_000_000n }) },
  { weight: 1, arbitrary: fc.bigInt(RATE_UNITS) },
);
const arbPercentUnits = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 100_000 }) },
  { weight: 1, arbitrary: fc.integer(PERCENT_UNITS) },
  { weight: 1, arbitrary: fc.constantFrom(0, 999_999) },
);
const arbInput = fc.record({ a: arbAmountUnits, r: arbRateUnits, p: arbPercentUnits });

/** decimal.js, regrouped as amount × (100 − p) / (100 × rate), then rounded half up to 6 places. */
function netByDecimal(amount: string, rate: string, payinRate: string): string {
  return new Exact(amount).mul(new Exact(100).minus(payinRate)).div(new Exact(rate).mul(100)).toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed(6);
}

/** n / d rounded half up, for positive integers. */
const divHalfUp = (n: bigint, d: bigint) => (2n * n + d) / (2n * d);
const micro = (m: bigint) => new Exact(m.toString()).div(1e6).toFixed(6);

/**
 * Exact integers: with amount = a/10^2, rate = r/10^8 and payin_rate = p/10^4, the net credit is
 * a × (10^6 − p) / r USDT and the gross a × 10^6 / r USDT; times 10^6 for micro-USDT.
 */
function exactCredit(a: bigint, r: bigint, p: number): { gross: string; net: string } {
  return { gross: micro(divHalfUp(a * 10n ** 12n, r)), net: micro(divHalfUp(a * (1_000_000n - BigInt(p)) * 10n ** 6n, r)) };
}

function credit(a: bigint, r: bigint, p: number) {
  return creditForPayin(units(a, 2), units(r, 8), units(p, 4));
}

describe('creditForPayin', () => {
  it('net is amount / rate × (1 − payin_rate / 100) rounded half up to 6 decimals, exactly (two independent oracles)', () => {
    fc.assert(
      fc.property(arbInput, ({ a, r, p }) => {
        const result = credit(a, r, p);
        const exact = exactCredit(a, r, p);
        expect(result.net.toFixed(6)).toBe(netByDecimal(units(a, 2), units(r, 8), units(p, 4)));
        expect(result.net.toFixed(6)).toBe(exact.net);
        expect(result.gross.toFixed(6)).toBe(exact.gross);
        // Already rounded: no digits beyond the micro-USDT that numeric(38, 6) would cut silently.
        expect(result.net.decimalPlaces()).toBeLessThanOrEqual(6);
        expect(result.gross.decimalPlaces()).toBeLessThanOrEqual(6);
        expect(result.fee.decimalPlaces()).toBeLessThanOrEqual(6);
      }),
      { numRuns: 2000 },
    );
  });

  it('gross = round6(amount / rate); fee = gross − net ≥ 0; 0 ≤ net ≤ gross; the fee is within a micro-USDT of gross × payin_rate / 100', () => {
    fc.assert(
      fc.property(arbInput, ({ a, r, p }) => {
        const { gross, net, fee } = credit(a, r, p);
        expect(gross.toFixed(6)).toBe(new Exact(units(a, 2)).div(units(r, 8)).toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed(6));
        expect(gross.minus(net).eq(fee)).toBe(true);
        expect(fee.gte(0)).toBe(true);
        expect(net.gte(0)).toBe(true);
        expect(net.lte(gross)).toBe(true);
        const feeExact = new Exact(units(a, 2)).div(units(r, 8)).mul(units(p, 4)).div(100);
        expect(fee.minus(feeExact).abs().lte('0.000001')).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('no fee at payin_rate 0: net = gross', () => {
    fc.assert(
      fc.property(arbAmountUnits, arbRateUnits, (a, r) => {
        const { gross, net, fee } = credit(a, r, 0);
        expect(fee.isZero()).toBe(true);
        expect(net.eq(gross)).toBe(true);
      }),
    );
  });

  it('is monotonic: more amount never credits less; a higher payin_rate never credits more', () => {
    fc.assert(
      fc.property(arbAmountUnits, arbAmountUnits, arbRateUnits, arbPercentUnits, (a1, a2, r, p) => {
        const [lo, hi] = a1 <= a2 ? [a1, a2] : [a2, a1];
        const small = credit(lo, r, p);
        const large = credit(hi, r, p);
        expect(small.net.lte(large.net)).toBe(true);
        expect(small.gross.lte(large.gross)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(arbAmountUnits, arbRateUnits, arbPercentUnits, arbPercentUnits, (a, r, p1, p2) => {
        const [lo, hi] = p1 <= p2 ? [p1, p2] : [p2, p1];
        expect(credit(a, r, hi).net.lte(credit(a, r, lo).net)).toBe(true);
      }),
    );
  });

  it('the worked example: 1500 RUB at 95.5 with 2.5 % → gross 15.706806, net 15.314136, fee 0.39267', () => {
    const { gross, net, fee } = creditForPayin('1500', '95.5', '2.5');
    expect([gross.toFixed(), net.toFixed(), fee.toFixed()]).toEqual(['15.706806', '15.314136', '0.39267']);
  });

  it('rounds an exact half-micro tie up, not to even', () => {
    // 0.01 / 20000 = 0.0000005 and 0.05 / 20000 = 0.0000025 exactly: banker's rounding would give 0 and 0.000002.
    expect(creditForPayin('0.01', '20000', '0').net.toFixed()).toBe('0.000001');
    expect(creditForPayin('0.05', '20000', '0').net.toFixed()).toBe('0.000003');
    // 1 / 8 × (1 − 0.5 / 100) = 0.124375 exactly; 1 / 16 = 0.0625: exact results are kept as they are.
    expect(creditForPayin('1', '8', '0.5').net.toFixed()).toBe('0.124375');
    // 0.01 / 1 × (1 − 99.995 / 100) = 0.0000005 → 0.000001 (a tie on the net, not the gross).
    const tie = creditForPayin('0.01', '1', '99.995');
    expect([tie.gross.toFixed(), tie.net.toFixed(), tie.fee.toFixed()]).toEqual(['0.01', '0.000001', '0.009999']);
  });

  it('edge cases: payin_rate 99.9999, tiny amounts at big rates, huge amounts at tiny rates, 8-decimal rates', () => {
    // The largest fee: one millionth of the gross is left.
    const top = creditForPayin('1000000', '1', '99.9999');
    expect([top.gross.toFixed(), top.net.toFixed(), top.fee.toFixed()]).toEqual(['1000000', '1', '999999']);
    expect(creditForPayin('1500', '95.5', '99.9999').net.toFixed()).toBe('0.000016');
    // A credit below half a micro-USDT is nothing at all, never negative.
    const dust = creditForPayin('0.01', '99999999999.99999999', '2.5');
    expect([dust.gross.toFixed(), dust.net.toFixed(), dust.fee.toFixed()]).toEqual(['0', '0', '0']);
    const tinyNet = creditForPayin('0.01', '480.25', '99');
    expect([tinyNet.gross.toFixed(), tinyNet.net.toFixed(), tinyNet.fee.toFixed()]).toEqual(['0.000021', '0', '0.000021']);
    // The top of the domain stays exact: 999 999 999 999 999.99 at 0.00000001 is 10^23-ish USDT.
    const huge = creditForPayin('999999999999999.99', '0.00000001', '2.5');
    expect(huge.gross.toFixed()).toBe('99999999999999999000000');
    expect(huge.net.toFixed()).toBe('97499999999999999025000');
    expect(huge.fee.toFixed()).toBe('2499999999999999975000');
    expect(creditForPayin('300000', '0.00000001', '0').net.toFixed()).toBe('30000000000000');
    // Rates with all 8 decimals.
    expect(creditForPayin('1500', '95.12345678', '2.5').net.toFixed(6)).toBe(netByDecimal('1500', '95.12345678', '2.5'));
    expect(creditForPayin('1500', '95.12345678', '2.5').net.toFixed(6)).toBe('15.374757');
    expect(creditForPayin('12345.67', '0.00000003', '1.2345').net.toFixed(6)).toBe(exactCredit(1234567n, 3n, 12345).net);
  });

  it('takes numbers, strings and decimals alike', () => {
    const text = (c: { gross: Decimal; net: Decimal; fee: Decimal }) => [c.gross.toFixed(), c.net.toFixed(), c.fee.toFixed()];
    const expected = text(creditForPayin('1500', '95.5', '2.5'));
    expect(text(creditForPayin(1500, 95.5, 2.5))).toEqual(expected);
    expect(text(creditForPayin(new Decimal(1500), new Decimal('95.5'), new Decimal('2.5')))).toEqual(expected);
  });

  it('refuses what cannot be a pay-in: rate 0 or negative, amount 0 or negative, payin_rate outside [0, 100), non-numbers', () => {
    expect(() => creditForPayin('1500', '0', '2.5')).toThrow(/rate must be positive/);
    expect(() => creditForPayin('1500', '-95.5', '2.5')).toThrow(/rate must be positive/);
    expect(() => creditForPayin('-1500', '95.5', '2.5')).toThrow(/amount must be positive/);
    expect(() => creditForPayin('0', '95.5', '2.5')).toThrow(/amount must be positive/);
    expect(() => creditForPayin('1500', '95.5', '100')).toThrow(/payin_rate/);
    expect(() => creditForPayin('1500', '95.5', '100.5')).toThrow(/payin_rate/);
    expect(() => creditForPayin('1500', '95.5', '-0.0001')).toThrow(/payin_rate/);
    expect(() => creditForPayin('Infinity', '95.5', '2.5')).toThrow(/amount must be positive/);
    expect(() => creditForPayin('1500', 'Infinity', '2.5')).toThrow(/rate must be positive/);
    expect(() => creditForPayin('NaN', '95.5', '2.5')).toThrow();
    expect(() => creditForPayin('1500', '95.5', 'NaN')).toThrow(/payin_rate/);
    expect(() => creditForPayin('abc', '95.5', '2.5')).toThrow();
  });
});

/*
 * The payout reserve (DESIGN.md decision 12): `amount / rate × (1 + payout_rate / 100)` USDT,
 * rounded once, half up, to 6 decimals; the fee is what it holds beyond round6(amount / rate).
 * The domain the service accepts: amounts with 2 decimals in (0, 10^12) (payouts.service.ts), rates
 * as for pay-ins, payout_rate with 4 decimals in [0, 100) (terminals.service.ts).
 */
const PAYOUT_AMOUNT_UNITS = { min: 1n, max: 10n ** 14n - 1n };
const arbPayoutAmountUnits = fc.oneof(
  { weight: 3, arbitrary: fc.bigInt({ min: 1n, max: 100_000_000n }) },
  { weight: 1, arbitrary: fc.bigInt(PAYOUT_AMOUNT_UNITS) },
);
const arbPayout = fc.record({ a: arbPayoutAmountUnits, r: arbRateUnits, p: arbPercentUnits });

/** Exact integers: the reserve is a × (10^6 + p) / r USDT and the base a × 10^6 / r USDT; times 10^6 for micro-USDT. */
function exactReserve(a: bigint, r: bigint, p: number): { reserve: string; base: string } {
  return { reserve: micro(divHalfUp(a * (1_000_000n + BigInt(p)) * 10n ** 6n, r)), base: micro(divHalfUp(a * 10n ** 12n, r)) };
}

/** decimal.js, regrouped as amount × (100 + p) / (100 × rate), then rounded half up to 6 places. */
function reserveByDecimal(amount: string, rate: string, payoutRate: string): string {
  return new Exact(amount).mul(new Exact(100).plus(payoutRate)).div(new Exact(rate).mul(100)).toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed(6);
}

function reserveOf(a: bigint, r: bigint, p: number) {
  return payoutReserve(units(a, 2), units(r, 8), units(p, 4));
}

describe('payoutReserve', () => {
  it('reserve is amount / rate × (1 + payout_rate / 100) rounded half up to 6 decimals, exactly (two independent oracles)', () => {
    fc.assert(
      fc.property(arbPayout, ({ a, r, p }) => {
        const { reserve, fee } = reserveOf(a, r, p);
        const exact = exactReserve(a, r, p);
        expect(reserve.toFixed(6)).toBe(exact.reserve);
        expect(reserve.toFixed(6)).toBe(reserveByDecimal(units(a, 2), units(r, 8), units(p, 4)));
        expect(fee.toFixed(6)).toBe(new Exact(exact.reserve).minus(exact.base).toFixed(6));
        // Already rounded: the hold and the fee posting carry no digits numeric(38, 6) would cut.
        expect(reserve.decimalPlaces()).toBeLessThanOrEqual(6);
        expect(fee.decimalPlaces()).toBeLessThanOrEqual(6);
      }),
      { numRuns: 2000 },
    );
  });

  it('fee ≥ 0; reserve − fee = round6(amount / rate), what leaves on completion; the fee is within a micro-USDT of amount / rate × payout_rate / 100', () => {
    fc.assert(
      fc.property(arbPayout, ({ a, r, p }) => {
        const { reserve, fee } = reserveOf(a, r, p);
        const sent = new Exact(units(a, 2)).div(units(r, 8));
        expect(fee.gte(0)).toBe(true);
        expect(reserve.minus(fee).toFixed(6)).toBe(sent.toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed(6));
        expect(reserve.gte(fee)).toBe(true);
        expect(
          fee
            .minus(sent.mul(units(p, 4)).div(100))
            .abs()
            .lte('0.000001'),
        ).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('no fee at payout_rate 0: the reserve is round6(amount / rate)', () => {
    fc.assert(
      fc.property(arbPayoutAmountUnits, arbRateUnits, (a, r) => {
        const { reserve, fee } = reserveOf(a, r, 0);
        expect(fee.isZero()).toBe(true);
        expect(reserve.toFixed(6)).toBe(exactReserve(a, r, 0).base);
      }),
    );
  });

  it('is monotonic: more amount or a higher payout_rate never reserves less, nor takes a smaller fee for a higher rate', () => {
    fc.assert(
      fc.property(arbPayoutAmountUnits, arbPayoutAmountUnits, arbRateUnits, arbPercentUnits, (a1, a2, r, p) => {
        const [lo, hi] = a1 <= a2 ? [a1, a2] : [a2, a1];
        expect(reserveOf(lo, r, p).reserve.lte(reserveOf(hi, r, p).reserve)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(arbPayoutAmountUnits, arbRateUnits, arbPercentUnits, arbPercentUnits, (a, r, p1, p2) => {
        const [lo, hi] = p1 <= p2 ? [p1, p2] : [p2, p1];
        expect(reserveOf(a, r, lo).reserve.lte(reserveOf(a, r, hi).reserve)).toBe(true);
        expect(reserveOf(a, r, lo).fee.lte(reserveOf(a, r, hi).fee)).toBe(true);
      }),
    );
  });

  it('the worked example: 1000 RUB at 95.5 with 2 % → reserve 10.680628, fee 0.209424', () => {
    const { reserve, fee } = payoutReserve('1000', '95.5', '2');
    expect([reserve.toFixed(), fee.toFixed()]).toEqual(['10.680628', '0.209424']);
  });

  it('rounds an exact half-micro tie up, not to even', () => {
    // 0.01 / 20000 = 0.0000005 exactly: banker's rounding would reserve 0.
    expect(payoutReserve('0.01', '20000', '0').reserve.toFixed()).toBe('0.000001');
    // 0.01 / 1 × 1.00005 = 0.0100005 → 0.010001 (a tie on the reserve, not the base).
    const tie = payoutReserve('0.01', '1', '0.005');
    expect([tie.reserve.toFixed(), tie.fee.toFixed()]).toEqual(['0.010001', '0.000001']);
  });

  it('edge cases: payout_rate 99.9999, dust at big rates, the largest amount at the smallest rate', () => {
    const top = payoutReserve('1000000', '1', '99.9999');
    expect([top.reserve.toFixed(), top.fee.toFixed()]).toEqual(['1999999', '999999']);
    const dust = payoutReserve('0.01', '99999999999.99999999', '2.5');
    expect([dust.reserve.toFixed(), dust.fee.toFixed()]).toEqual(['0', '0']);
    const huge = payoutReserve('999999999999.99', '0.00000001', '2.5');
    expect([huge.reserve.toFixed(), huge.fee.toFixed()]).toEqual(['102499999999998975000', '2499999999999975000']);
    expect(payoutReserve('1500', '95.12345678', '1.2345').reserve.toFixed(6)).toBe(reserveByDecimal('1500', '95.12345678', '1.2345'));
  });

  it('refuses what cannot be a payout: rate 0 or negative, amount 0 or negative, payout_rate outside [0, 100), non-numbers', () => {
    expect(() => payoutReserve('1500', '0', '2')).toThrow(/rate must be positive/);
    expect(() => payoutReserve('1500', '-95.5', '2')).toThrow(/rate must be positive/);
    expect(() => payoutReserve('0', '95.5', '2')).toThrow(/amount must be positive/);
    expect(() => payoutReserve('-1', '95.5', '2')).toThrow(/amount must be positive/);
    expect(() => payoutReserve('1500', '95.5', '100')).toThrow(/payout_rate/);
    expect(() => payoutReserve('1500', '95.5', '-0.0001')).toThrow(/payout_rate/);
    expect(() => payoutReserve('1500', '95.5', 'NaN')).toThrow(/payout_rate/);
    expect(() => payoutReserve('Infinity', '95.5', '2')).toThrow(/amount must be positive/);
    expect(() => payoutReserve('abc', '95.5', '2')).toThrow();
  });
});

describe('executors\' money (DESIGN.md "Executors\' money")', () => {
  const arbSettlement = fc.record({ a: arbAmountUnits, r: arbRateUnits, p: arbPercentUnits, w: arbPercentUnits });

  it('the hold is amount / rate rounded half up to 6 places, the gross of decision 11', () => {
    fc.assert(
      fc.property(arbInput, ({ a, r }) => {
        const amount = units(a, 2);
        const rate = units(r, 8);
        const hold = payinHold(amount, rate);
        expect(hold.toFixed(6)).toBe(new Exact(amount).div(rate).toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed(6));
        expect(hold.eq(creditForPayin(amount, rate, '0').gross)).toBe(true);
      }),
    );
  });

  it('a completion splits v exactly: terminal net + executor reward + revenue = v, the reward rounded once', () => {
    fc.assert(
      fc.property(arbSettlement, ({ a, r, p, w }) => {
        const amount = units(a, 2);
        const rate = units(r, 8);
        const s = payinSettlement(amount, rate, units(p, 4), units(w, 4));
        expect(s.net.plus(s.reward).plus(s.revenue).eq(s.gross)).toBe(true);
        expect(s.gross.eq(payinHold(amount, rate))).toBe(true);
        expect(s.reward.toFixed(6)).toBe(s.gross.mul(units(w, 4)).div(100).toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed(6));
        for (const part of [s.net, s.reward, s.revenue]) expect(part.decimalPlaces()).toBeLessThanOrEqual(6);
        expect(s.reward.gte(0) && s.reward.lte(s.gross)).toBe(true);
      }),
    );
  });

  it('a payout pays the executor p × (1 + payout_reward / 100) and the rest of the reserve is revenue', () => {
    fc.assert(
      fc.property(arbSettlement, ({ a, r, p, w }) => {
        const amount = units(a, 2);
        const rate = units(r, 8);
        const { reserve } = payoutReserve(amount, rate, units(p, 4));
        const s = payoutSettlement(amount, rate, reserve, units(w, 4));
        expect(s.executorCredit.plus(s.revenue).eq(reserve)).toBe(true);
        const exact = new Exact(amount).div(rate).mul(new Exact(1).plus(new Exact(units(w, 4)).div(100)));
        expect(s.executorCredit.toFixed(6)).toBe(exact.toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed(6));
        // Same reward as the payout's fee → the platform keeps nothing and loses nothing.
        if (p === w) expect(s.revenue.isZero()).toBe(true);
      }),
    );
  });

  it('refuses rewards outside [0, 100) and NaN', () => {
    for (const bad of ['-0.0001', '100', 'NaN']) {
      expect(() => payinSettlement('100', '95.5', '2', bad)).toThrow(RangeError);
      expect(() => payoutSettlement('100', '95.5', '1.1', bad)).toThrow(RangeError);
    }
  });
});
