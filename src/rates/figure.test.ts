import { describe, expect, it } from 'vitest';
import { combine, DEFAULT_FIGURE_RULES, sourceFigure, TooFewAdverts, withMarkup } from './figure.js';
import type { Advert } from './sources/source.js';

const advert = (price: string, extra: Partial<Advert> = {}): Advert => ({
  price,
  available: '1000',
  min: '1000',
  max: '100000',
  pay_methods: ['75'],
  trader: { name: `t${price}`, orders: 500, completion_percent: 99 },
  promoted: false,
  ...extra,
});

describe('sourceFigure', () => {
  it('is the median of the ranks taken, best price first', () => {
    const made = sourceFigure([advert('95.30'), advert('95.10'), advert('95.20')], 'buy', DEFAULT_FIGURE_RULES);
    expect(made.figure).toBe('95.2');
    expect(made.used).toEqual(['95.10', '95.20', '95.30']);
    // Selling USDT, the best price is the highest.
    expect(sourceFigure([advert('95.30'), advert('95.10'), advert('95.20'), advert('95.25')], 'sell', { ...DEFAULT_FIGURE_RULES, ranks: [1, 3] }).used).toEqual(
      ['95.30', '95.25', '95.20'],
    );
  });

  it('one advert far from the rest cannot move it: left out as an outlier', () => {
    const made = sourceFigure([advert('70.00'), advert('95.10'), advert('95.20'), advert('95.30'), advert('95.40')], 'buy', DEFAULT_FIGURE_RULES);
    expect(made.figure).toBe('95.25');
    expect(made.adverts.find((a) => a.price === '70.00')?.left_out).toBe('outlier');
  });

  it('drops promoted adverts, other pay methods, limits that leave the probe out, and traders below the quality asked for', () => {
    const adverts = [
      advert('90.00', { promoted: true }),
      advert('91.00', { pay_methods: ['14'] }),
      advert('92.00', { min: '60000' }),
      advert('93.00', { trader: { name: 'new', orders: 3, completion_percent: 100 } }),
      advert('93.50', { trader: { name: 'bad', orders: 900, completion_percent: 80 } }),
      advert('95.00'),
      advert('95.10'),
      advert('95.20'),
    ];
    const made = sourceFigure(adverts, 'buy', { ...DEFAULT_FIGURE_RULES, payMethods: ['75'], amount: '50000', minOrders: 50, minCompletionPercent: 95 });
    expect(made.figure).toBe('95.1');
    expect(made.adverts.map((a) => a.left_out)).toEqual(['promoted', 'pay_method', 'amount', 'trader', 'trader', undefined, undefined, undefined]);
  });

  it('takes the ranks asked for (bait adverts at the top skipped)', () => {
    const adverts = ['94.00', '94.50', '95.00', '95.10', '95.20', '95.30'].map((p) => advert(p));
    const made = sourceFigure(adverts, 'buy', { ...DEFAULT_FIGURE_RULES, ranks: [3, 5] });
    expect(made.used).toEqual(['95.00', '95.10', '95.20']);
    expect(made.figure).toBe('95.1');
  });

  it('gives no figure from fewer fitting adverts than asked for', () => {
    expect(() => sourceFigure([advert('95.00'), advert('95.10', { promoted: true })], 'buy', DEFAULT_FIGURE_RULES)).toThrow(TooFewAdverts);
    expect(() => sourceFigure([], 'buy', DEFAULT_FIGURE_RULES)).toThrow('only 0 adverts fit');
  });

  it('order book levels (no trader, no pay methods) pass the P2P rules', () => {
    const level = (price: string): Advert => ({ price, available: '5000', min: null, max: null, pay_methods: [], trader: null, promoted: false });
    const made = sourceFigure([level('95.0'), level('95.1'), level('95.2')], 'buy', {
      ...DEFAULT_FIGURE_RULES,
      payMethods: ['75'],
      minOrders: 100,
      amount: '1000',
    });
    expect(made.figure).toBe('95.1');
  });
});

describe('combine', () => {
  it('one source: its figure', () => {
    expect(combine([{ source: 'bybit_p2p', figure: '95.1' }], 3)).toEqual({ figure: '95.1', results: [{ source: 'bybit_p2p', figure: '95.1' }] });
  });

  it('three sources: one further than the spread from the median of all is left out, the figure is the median of the rest', () => {
    const { figure, results } = combine(
      [
        { source: 'bybit_p2p', figure: '95.10' },
        { source: 'binance_p2p', figure: '95.30' },
        { source: 'rapira', figure: '101.00' },
      ],
      3,
    );
    expect(figure).toBe('95.2');
    expect(results.map((r) => r.left_out ?? false)).toEqual([false, false, true]);
  });

  it('two that disagree: the setting’s own source is kept', () => {
    const { figure, results } = combine(
      [
        { source: 'bybit_p2p', figure: '95' },
        { source: 'rapira', figure: '99' },
      ],
      3,
    );
    expect(figure).toBe('95');
    expect(results[1]!.left_out).toBe(true);
    expect(
      combine(
        [
          { source: 'bybit_p2p', figure: '95' },
          { source: 'rapira', figure: '96' },
        ],
        3,
      ).figure,
    ).toBe('95.5');
  });
});

it('withMarkup prices the figure to 8 places', () => {
  expect(withMarkup('95.1', '1.5')).toBe('96.5265');
  expect(withMarkup('95.1', 0)).toBe('95.1');
  expect(withMarkup('0.19876543', '-0.5')).toBe('0.1977716');
  expect(withMarkup('95.123456789', '0')).toBe('95.12345679');
});
