import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { moneyGroup, readAmount } from './amount.js';

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
  ])('reads %j as %s', (raw, expected) => {
    expect(readAmount(raw)).toBe(expected);
  });

  it.each([
    '', 'Баланс', '-1 500 ₽', '−1 500 ₽', '0 ₽', '0,00 ₽', '1 500,005 ₽', '1500 USD', '12:34', '1 500 ₽ 200',
  ])('rejects %j', (raw) => {
    expect(readAmount(raw)).toBeUndefined();
  });
});

const SEPARATORS = ['', ' ', '\u00A0', '\u202F'];
const CURRENCIES = ['₽', 'р', 'р.', 'руб.', 'RUB', 'RUR'];

/** Formats cents the way Russian banks print rubles, in one of their styles. */
function formatRuble(cents: number, thousands: string, decimal: string, gap: string, currency: string, plus: boolean): string {
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
    currency: fc.constantFrom(...CURRENCIES),
    plus: fc.boolean(),
  })
  .map((s) => ({ text: formatRuble(s.cents, s.thousands, s.decimal, s.gap, s.currency, s.plus), expected: new Decimal(s.cents).div(100).toFixed(2) }));

describe('readAmount properties', () => {
  it('reads back any amount from 1 to 10^7 written in a Russian style', () => {
    fc.assert(
      fc.property(styledAmount, ({ text, expected }) => {
        expect(readAmount(text)).toBe(expected);
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
});
