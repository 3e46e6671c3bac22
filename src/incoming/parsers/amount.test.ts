import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Currency, moneyGroup, readAmount, readMoney } from './amount.js';

describe('readAmount', () => {
  it.each([
    ['1 500,00 ₽', '1500.00'],
    ['1 500.00 р.', '1500.00'],
    ['+1500 RUB', '1500.00'],
    ['1500р', '1500.00'],
    ['15 000 ₽', '15000.00'],
    ['1\u00A0500\u00A0₽', '1500.00'],
    ['+12\u202F345,5\u202F₽', '12345.50'],
    ['3 500 руб.', '3500.00'],
    ['2 000 рублей', '2000.00'],
    ['47.33р', '47.33'],
    ['1 500,00 RUR', '1500.00'],
    ['₽ 1 500', '1500.00'],
    ['RUB +250.10', '250.10'],
    ['1,500.00 RUB', '1500.00'],
    ['1.500,00 ₽', '1500.00'],
    ['1 000 000,01 ₽', '1000000.01'],
    ['0,50 ₽', '0.50'],
    ['1000p', '1000.00'],
    ['14466.00 KZT', '14466.00'],
    ['139 296,44т', '139296.44'],
    ['9 990,00 тг', '9990.00'],
    ['₸ 1 990', '1990.00'],
    ['5 000 тенге', '5000.00'],
    ['49.35 смн.', '49.35'],
    ['112.00 TJS', '112.00'],
    ['250 сомони', '250.00'],
  ])('reads %j as %s', (raw, expected) => {
    expect(readAmount(raw)).toBe(expected);
  });

  it.each([
    '',
    'Баланс',
    '-1 500 ₽',
    '−1 500 ₽',
    '0 ₽',
    '0,00 ₽',
    '1 500,005 ₽',
    '1500 USD',
    '12:34',
    '1 500 ₽ 200',
    // "т" and a Latin "p" are marks only against the digits; spaced, they start a word.
    '1500 т',
    '1500 p',
    '1500',
    '-300.00KZT',
    '1 500 EUR',
  ])('rejects %j', (raw) => {
    expect(readAmount(raw)).toBeUndefined();
  });
});

const SEPARATORS = ['', ' ', '\u00A0', '\u202F'];
/** The marks each currency is written with, and whether the mark must touch the digits. */
const MARKS: Record<Currency, { mark: string; attached?: boolean }[]> = {
  RUB: [{ mark: '₽' }, { mark: 'р' }, { mark: 'р.' }, { mark: 'руб.' }, { mark: 'RUB' }, { mark: 'RUR' }, { mark: 'p', attached: true }],
  KZT: [{ mark: '₸' }, { mark: 'KZT' }, { mark: 'тг' }, { mark: 'тенге' }, { mark: 'т', attached: true }],
  TJS: [{ mark: 'TJS' }, { mark: 'смн.' }, { mark: 'сомони' }],
};
const CURRENCY_MARKS = (Object.entries(MARKS) as [Currency, { mark: string; attached?: boolean }[]][]).flatMap(([currency, marks]) =>
  marks.map((m) => ({ currency, ...m })),
);

/** Formats cents the way the banks print amounts, in one of their styles. */
function formatAmount(cents: number, thousands: string, decimal: string, gap: string, currency: string, plus: boolean): string {
  const whole = String(Math.floor(cents / 100)).replace(/\B(?=(\d{3})+$)/g, thousands);
  const kopecks = String(cents % 100).padStart(2, '0');
  return `${plus ? '+' : ''}${whole}${decimal}${kopecks}${gap}${currency}`;
}

const styledAmount = fc
  .record({
    cents: fc.integer({ min: 100, max: 1_000_000_000 }),
    thousands: fc.constantFrom(...SEPARATORS),
    decimal: fc.constantFrom(',', '.'),
    gap: fc.constantFrom('', ' ', '\u00A0'),
    mark: fc.constantFrom(...CURRENCY_MARKS),
    plus: fc.boolean(),
  })
  .map((s) => ({
    text: formatAmount(s.cents, s.thousands, s.decimal, s.mark.attached ? '' : s.gap, s.mark.mark, s.plus),
    expected: new Decimal(s.cents).div(100).toFixed(2),
    currency: s.mark.currency,
  }));

describe('readMoney', () => {
  it.each([
    ['+1 500 ₽', { amount: '1500.00', currency: 'RUB', negative: false }],
    ['1500 RUR', { amount: '1500.00', currency: 'RUB', negative: false }],
    ['-300.00KZT', { amount: '300.00', currency: 'KZT', negative: true }],
    ['4134т', { amount: '4134.00', currency: 'KZT', negative: false }],
    ['49.35 смн.', { amount: '49.35', currency: 'TJS', negative: false }],
    ['TJS 11.74', { amount: '11.74', currency: 'TJS', negative: false }],
    ['8 000', { amount: '8000.00', negative: false }],
  ])('reads %j', (raw, expected) => {
    expect(readMoney(raw)).toStrictEqual(expected);
  });
});

describe('readAmount properties', () => {
  it('reads back any amount from 1 to 10^7 in any style and currency mark, with its currency', () => {
    fc.assert(
      fc.property(styledAmount, ({ text, expected, currency }) => {
        expect(readAmount(text)).toBe(expected);
        expect(readMoney(text)).toStrictEqual({ amount: expected, currency, negative: false });
      }),
      { numRuns: 2000 },
    );
  });

  it('finds the same amount inside a sentence, not the figure after it', () => {
    const pattern = new RegExp(`Поступление ${moneyGroup('amount')} Баланс ${moneyGroup('balance')}`, 'i');
    fc.assert(
      fc.property(styledAmount, styledAmount, (amount, balance) => {
        const groups = pattern.exec(`Поступление ${amount.text} Баланс ${balance.text}`)?.groups;
        expect(groups?.amount && readAmount(groups.amount)).toBe(amount.expected);
        expect(groups?.balance && readAmount(groups.balance)).toBe(balance.expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('never reads a minus-signed amount as a credit, and reads it as a debit', () => {
    fc.assert(
      fc.property(styledAmount, ({ text, expected, currency }) => {
        const negative = `-${text.replace(/^\+/, '')}`;
        expect(readAmount(negative)).toBeUndefined();
        expect(readMoney(negative)).toStrictEqual({ amount: expected, currency, negative: true });
        // Inside a sentence a credit pattern does not start on the digits after the minus.
        const pattern = new RegExp(`Поступление ${moneyGroup('amount')}`, 'i');
        expect(pattern.exec(`Поступление ${negative}`)).toBeNull();
      }),
      { numRuns: 1000 },
    );
  });
});
