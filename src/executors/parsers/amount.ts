import { Decimal } from 'decimal.js';

/**
 * Ruble amounts as Russian banks print them: "1 500,00 ₽", "1 500.00 р.", "+1500 RUB", "1500р",
 * "15 000 ₽", "₽ 1 500", thousands grouped by an ordinary, no-break (U+00A0), narrow no-break
 * (U+202F), thin (U+2009) or figure (U+2007) space.
 *
 * The regular-expression fragments are exported so that every bank parser recognises exactly the
 * amounts this module can read.
 */

/** The spaces banks and phone OSes put between digit groups. */
const SPACE = '[ \\u00A0\\u202F\\u2009\\u2007]';

/**
 * Ruble markers. The lookahead keeps "р" from being the first letter of the next word
 * ("1500 расход" is not "1500 р").
 */
export const CURRENCY = '(?:₽|RUB|RUR|руб(?:лей|ля|ль|\\.)?|р\\.?)(?![A-Za-zА-Яа-яЁё])';

/**
 * Digits, grouped by threes with one kind of separator or not grouped, with at most two decimals
 * after "," or ".". A separator followed by exactly three digits groups thousands ("1.500,00",
 * "1,500.00"): rubles have two decimals, so three digits after a separator cannot be kopecks.
 */
const NUMBER = [
  `\\d{1,3}(?:${SPACE}\\d{3})+(?:[.,]\\d{1,2})?`,
  '\\d{1,3}(?:,\\d{3})+(?:\\.\\d{1,2})?',
  '\\d{1,3}(?:\\.\\d{3})+(?:,\\d{1,2})?',
  '\\d+(?:[.,]\\d{1,2})?',
].join('|');

/** No digit or decimal part may follow, so "15,000" is never read as "15,00" + "0". */
const NUMBER_END = '(?!\\d|[.,]\\d)';

/**
 * A regular-expression group `(?<name>…)` matching one amount with its currency (before or
 * after the number) and an optional "+". It never starts right after a digit, a separator or a
 * minus, so a debit "-1 500 ₽" is not taken for a credit of "1 500 ₽".
 */
export function moneyGroup(name: string): string {
  const plus = `(?:\\+${SPACE}?)?`;
  return `(?<${name}>(?<![\\d.,+\\-−–])${plus}(?:(?:${NUMBER})${NUMBER_END}${SPACE}?${CURRENCY}|${CURRENCY}${SPACE}?${plus}(?:${NUMBER})${NUMBER_END}))`;
}

const WHOLE_AMOUNT = new RegExp(
  `^${SPACE}*(?<sign>[+\\-−–])?${SPACE}*(?:${CURRENCY}${SPACE}*)?(?<sign2>[+\\-−–])?${SPACE}*` +
    `(?<number>${NUMBER})${SPACE}*(?:${CURRENCY})?${SPACE}*$`,
  'i',
);

/**
 * Reads one ruble amount ("+1 500,00 ₽", "1 500.00 р.", "1500р", "RUB 1500") as a canonical
 * decimal string with two places ("1500.00"). Returns undefined for anything else, for zero and
 * for a negative (debit) amount.
 */
export function readAmount(raw: string): string | undefined {
  const match = WHOLE_AMOUNT.exec(raw);
  const number = match?.groups?.number;
  if (!number) return undefined;
  const sign = match.groups?.sign ?? match.groups?.sign2;
  if (sign !== undefined && sign !== '+') return undefined;
  const fraction = /[.,](\d{1,2})$/.exec(number);
  const whole = (fraction ? number.slice(0, -fraction[0].length) : number).replace(/\D/g, '');
  const value = new Decimal(`${whole}.${fraction?.[1] ?? '0'}`);
  return value.gt(0) ? value.toFixed(2) : undefined;
}
