/**
 * Unit and property tests of the cross-border pricing (spec "POST /v1/payments", cross-border
 * rules 2, 3, 5, 6). Expected values are derived with an independent, higher-precision decimal.
 */
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COUNTRY_CURRENCY, CROSS_BORDER_METHODS, CURRENCY_COUNTRY, METHODS, type Method, ORDER_CURRENCIES } from '../../lib/methods.js';
import { money } from '../../lib/money.js';
import { candidatesFor, convert } from './cascade.js';

const RATES: Record<string, string> = { RUB: '95.5', KZT: '480.25', TJS: '10.95', UZS: '12650', KGS: '87.3', AZN: '1.7', VND: '25400' };
const rates = (extra: Record<string, string> = {}) => new Map(Object.entries({ ...RATES, ...extra }));

const Exact = Decimal.clone({ precision: 100 });
const MINOR: Record<string, number> = { RUB: 2, KZT: 2, TJS: 2, UZS: 2, KGS: 2, AZN: 2, AMD: 2, GEL: 2, VND: 0 };
const LOCAL_CURRENCIES = [...new Set(Object.values(COUNTRY_CURRENCY))];
const DOMESTIC = METHODS.filter((m) => !CROSS_BORDER_METHODS.has(m));

/** A rate as the database holds it: positive, up to 8 decimals, up to 10^7. */
const arbRate = fc.integer({ min: 1, max: 1_000_000_000_000_000 }).map((n) => new Exact(n).div(1e8).toFixed());
/** An amount with up to `places` decimals, up to 10^9 units. */
const arbAmount = (places: number) => fc.integer({ min: 1, max: 1e9 * 10 ** places }).map((n) => money(new Exact(n).div(10 ** places).toFixed()));
const arbCurrency = fc.constantFrom(...LOCAL_CURRENCIES);

describe('convert', () => {
  it('prices through USDT: amount ÷ rate(from) × rate(to), half up to the target minor unit', () => {
    expect(convert(money('5000'), 'RUB', 'TJS', rates())?.toFixed()).toBe('573.3');
    expect(convert(money('10000'), 'KZT', 'TJS', rates())?.toFixed()).toBe('228.01');
    expect(convert(money('1000'), 'RUB', 'VND', rates())?.toFixed()).toBe('265969');
    expect(convert(money('1234.56'), 'RUB', 'VND', rates())?.toFixed()).toBe('328354');
  });

  it('rounds an exact tie half up, not to even (105.05 RUB = 12.045 TJS → 12.05; 124.15 → 14.24)', () => {
    expect(convert(money('105.05'), 'RUB', 'TJS', rates())?.toFixed(2)).toBe('12.05');
    expect(convert(money('124.15'), 'RUB', 'TJS', rates())?.toFixed(2)).toBe('14.24');
    // 0.125 with rates 1 and 1: would be 0.12 under banker's rounding.
    expect(
      convert(
        money('0.125'),
        'AAA',
        'BBB',
        new Map([
          ['AAA', '1'],
          ['BBB', '1'],
        ]),
      )?.toFixed(2),
    ).toBe('0.13');
  });

  it('is undefined when either currency has no rate', () => {
    expect(convert(money('100'), 'RUB', 'AMD', rates())).toBeUndefined();
    expect(convert(money('100'), 'AMD', 'RUB', rates())).toBeUndefined();
  });

  it('property: converting to the same currency gives the amount back', () => {
    const arbCase = arbCurrency.chain((currency) => fc.tuple(fc.constant(currency), arbRate, arbAmount(MINOR[currency] ?? 2)));
    fc.assert(
      fc.property(arbCase, ([currency, rate, amount]) => {
        const out = convert(amount, currency, currency, new Map([[currency, rate]]));
        expect(out?.eq(amount), `${amount.toFixed()} ${currency} at ${rate} → ${out?.toFixed()}`).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('property: the result is within half a minor unit of the exact value and has at most the minor-unit decimals', () => {
    fc.assert(
      fc.property(arbCurrency, arbCurrency, arbRate, arbRate, arbAmount(2), (from, to, fromRate, toRate, amount) => {
        fc.pre(from !== to);
        const out = convert(
          amount,
          from,
          to,
          new Map([
            [from, fromRate],
            [to, toRate],
          ]),
        );
        expect(out).toBeDefined();
        const places = MINOR[to] ?? 2;
        const exact = new Exact(amount.toFixed()).times(toRate).div(fromRate);
        const halfUnit = new Exact(10).pow(-places).div(2);
        const error = new Exact(out!.toFixed()).minus(exact).abs();
        expect(error.lte(halfUnit), `${amount.toFixed()} ${from}@${fromRate} → ${to}@${toRate}: ${out!.toFixed()} vs ${exact.toFixed()}`).toBe(true);
        expect(out!.decimalPlaces()).toBeLessThanOrEqual(places);
        // Exactly half a unit away only at a tie, and then the result is the upper neighbour.
        if (error.eq(halfUnit)) expect(new Exact(out!.toFixed()).gt(exact)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('property: monotone in the amount (a larger order never pays less locally)', () => {
    fc.assert(
      fc.property(arbCurrency, arbCurrency, arbRate, arbRate, arbAmount(2), arbAmount(2), (from, to, fr, tr, a, b) => {
        const r = new Map([
          [from, fr],
          [to, tr],
        ]);
        const [lo, hi] = a.lte(b) ? [a, b] : [b, a];
        expect(convert(lo, from, to, r)!.lte(convert(hi, from, to, r)!)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('candidatesFor', () => {
  it('property: domestic methods pay the order amount in the home country of the order currency, whatever country or rates', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DOMESTIC),
        fc.constantFrom(...ORDER_CURRENCIES),
        arbAmount(2),
        fc.option(fc.constantFrom(...Object.keys(COUNTRY_CURRENCY)), { nil: null }),
        fc.boolean(),
        (method, orderCurrency, amount, country, withRates) => {
          const out = candidatesFor({ method, orderCurrency, amount, country, rates: withRates ? rates() : new Map() });
          expect(out).toEqual([{ currency: orderCurrency, country: CURRENCY_COUNTRY[orderCurrency], payerAmount: amount.toFixed(2) }]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("property: cross-border in the order currency's own country pays the amount unconverted (rule 3)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Method>('CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER_SIM'),
        fc.constantFrom(...ORDER_CURRENCIES),
        arbAmount(2),
        (method, orderCurrency, amount) => {
          const country = CURRENCY_COUNTRY[orderCurrency];
          const out = candidatesFor({ method, orderCurrency, amount, country, rates: rates() });
          expect(out).toHaveLength(1);
          expect(out[0]).toMatchObject({ currency: orderCurrency, country });
          expect(money(out[0]!.payerAmount).eq(amount)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: cross-border without country offers every priced country, each converted (rule 6), and skips unpriced ones', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Method>('CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER_SIM'),
        fc.constantFrom(...ORDER_CURRENCIES),
        fc.integer({ min: 10_000, max: 30_000_000 }).map((n) => money(new Exact(n).div(100).toFixed())),
        fc.subarray(LOCAL_CURRENCIES),
        (method, orderCurrency, amount, unpriced) => {
          const r = rates();
          for (const c of unpriced) if (c !== orderCurrency) r.delete(c);
          const out = candidatesFor({ method, orderCurrency, amount, country: null, rates: r });
          const expected = Object.entries(COUNTRY_CURRENCY)
            .filter(([, local]) => local === orderCurrency || r.has(local))
            .map(([country, local]) => ({ country, currency: local }));
          expect(out.map(({ country, currency }) => ({ country, currency }))).toEqual(expected);
          for (const c of out) {
            const want = c.currency === orderCurrency ? amount : convert(amount, orderCurrency, c.currency, r)!;
            expect(money(c.payerAmount).eq(want), `${c.country}: ${c.payerAmount} vs ${want.toFixed()}`).toBe(true);
            expect(money(c.payerAmount).gt(0)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a RUB order for TJ is one TJS candidate priced through USDT (rule 2)', () => {
    expect(candidatesFor({ method: 'CROSS_BORDER', orderCurrency: 'RUB', amount: money('5000'), country: 'TJ', rates: rates() })).toEqual([
      { currency: 'TJS', country: 'TJ', payerAmount: '573.3' },
    ]);
  });

  it('VIET_QR without country offers only Vietnam, in whole dong', () => {
    expect(candidatesFor({ method: 'VIET_QR', orderCurrency: 'RUB', amount: money('1000'), country: null, rates: rates() })).toEqual([
      { currency: 'VND', country: 'VN', payerAmount: '265969' },
    ]);
  });

  it('a requested country whose currency has no rate has no candidates (the caller answers PAY_004)', () => {
    expect(candidatesFor({ method: 'CROSS_BORDER', orderCurrency: 'RUB', amount: money('1000'), country: 'AM', rates: rates() })).toEqual([]);
    expect(candidatesFor({ method: 'CROSS_BORDER', orderCurrency: 'RUB', amount: money('1000'), country: 'XX', rates: rates() })).toEqual([]);
  });

  it('leaves out a country where the converted amount rounds to zero', () => {
    // 0.01 KZT ÷ 480.25 × 1.7 = 0.0000354 AZN → 0.00: nothing to pay there.
    const out = candidatesFor({ method: 'CROSS_BORDER', orderCurrency: 'KZT', amount: money('0.01'), country: null, rates: rates() });
    expect(out.find((c) => c.country === 'AZ')).toBeUndefined();
    expect(out.find((c) => c.country === 'KZ')).toEqual({ currency: 'KZT', country: 'KZ', payerAmount: '0.01' });
    expect(out.find((c) => c.country === 'UZ')).toEqual({ currency: 'UZS', country: 'UZ', payerAmount: '0.26' });
  });
});
