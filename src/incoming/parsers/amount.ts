import { Decimal } from 'decimal.js';

/**
 * Amounts as Russian, Kazakh and Tajik banks print them: "1 500,00 ₽", "1 500.00 р.", "10000 r.", "+1500 RUB",
 * "1500р", "₽ 1 500", "14466.00 KZT", "139 296,44т", "9 990,00 тг", "49.35 смн.", "112.00 TJS",
 * thousands grouped by an ordinary, no-break (U+00A0), narrow no-break (U+202F), thin (U+2009) or
 * figure (U+2007) space, or by "," / "." when the other one is the decimal separator.
 *
 * The regular-expression fragments are built here so that every pattern of the parser table
 * recognises exactly the amounts this module can read.
 */

/** The currencies a bank notification can be read in. */
export const CURRENCIES = ['RUB', 'KZT', 'TJS'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** The spaces banks and phone OSes put between digit groups. */
const SPACE = '[ \\u00A0\\u202F\\u2009\\u2007]';

/** Not the first letter of a word: "1500 расход" is not "1500 р", "6000тНа" is not "6000 т". */
const NOT_A_WORD = '(?![A-Za-zА-Яа-яЁёӣӢ])';

/**
 * Currency marks, each one currency. "т" (Kaspi's tenge) and the Latin "p" some banks type for
 * "р" are marks only when written against the digits: spaced, they are words.
 */
const MARKS: Record<Currency, { spaced: string; attached: string }> = {
  RUB: { spaced: '₽|RUB|RUR|руб(?:лей|ля|ль|\\.)?|р\\.?|r\\.', attached: 'p\\.?|r\\.?' },
  KZT: { spaced: '₸|KZT|тенге|тг\\.?', attached: 'т' },
  TJS: { spaced: 'TJS|сомон[иӣ]|смн\\.?', attached: '' },
};

const SPACED_MARK = `(?:${CURRENCIES.map((c) => MARKS[c].spaced).join('|')})${NOT_A_WORD}`;
const ATTACHED_MARK = `(?:${CURRENCIES.map((c) => MARKS[c].attached)
  .filter(Boolean)
  .join('|')})${NOT_A_WORD}`;
const MARK_CURRENCY = CURRENCIES.map((currency) => ({
  currency,
  pattern: new RegExp(`^(?:${[MARKS[currency].spaced, MARKS[currency].attached].filter(Boolean).join('|')})$`, 'i'),
}));

/**
 * Digits, grouped by threes with one kind of separator or not grouped, with at most two decimals
 * after "," or ".". A separator followed by exactly three digits groups thousands ("1.500,00",
 * "1,500.00"): these currencies have two decimals, so three digits after a separator cannot be
 * the minor unit.
 */
const NUMBER = [
  `\\d{1,3}(?:${SPACE}\\d{3})+(?:[.,]\\d{1,2})?`,
  '\\d{1,3}(?:,\\d{3})+(?:\\.\\d{1,2})?',
  '\\d{1,3}(?:\\.\\d{3})+(?:,\\d{1,2})?',
  '\\d+(?:[.,]\\d{1,2})?',
].join('|');

/** No digit or decimal part may follow, so "15,000" is never read as "15,00" + "0". */
const NUMBER_END = '(?!\\d|[.,]\\d)';

/** A mark after the number: spaced or attached. */
const MARK_AFTER = `(?:${SPACE}?${SPACED_MARK}|${ATTACHED_MARK})`;

export interface MoneyGroupOptions {
  /** The number may come without a currency mark (the pattern says which currency it is). */
  markOptional?: boolean;
  /** A leading minus may belong to the amount: debits are read, never credited. */
  signed?: boolean;
}

/**
 * A regular-expression group `(?<name>…)` matching one amount with its currency mark (before or
 * after the number) and an optional "+". Unless `signed`, it never starts right after a digit, a
 * separator or a minus, so a debit "-1 500 ₽" is not taken for a credit of "1 500 ₽".
 */
export function moneyGroup(name: string, options: MoneyGroupOptions = {}): string {
  const sign = options.signed ? `(?:[+\\-]${SPACE}?)?` : `(?:\\+${SPACE}?)?`;
  const before = options.signed ? '(?<![\\d.,])' : '(?<![\\d.,+\\-])';
  const number = `(?:${NUMBER})${NUMBER_END}`;
  const marked = `${number}${MARK_AFTER}|${SPACED_MARK}${SPACE}?${sign}${number}`;
  const body = options.markOptional ? `${marked}|${number}(?!${SPACE}?\\d)` : marked;
  return `(?<${name}>${before}${sign}(?:${body}))`;
}

const WHOLE_AMOUNT = new RegExp(
  `^${SPACE}*(?<sign>[+\\-−–])?${SPACE}*(?:(?<before>${SPACED_MARK})${SPACE}*)?(?<sign2>[+\\-−–])?${SPACE}*` +
    `(?<number>${NUMBER})(?:(?<attached>${ATTACHED_MARK})|${SPACE}*(?<after>${SPACED_MARK}))?${SPACE}*$`,
  'i',
);

/** An amount read from a notification. */
export interface Money {
  /** Canonical decimal with two places ("1500.00"), always positive. */
  amount: string;
  /** The currency its mark names; undefined when the amount came without a mark. */
  currency?: Currency;
  /** The amount was written with a minus (a debit). */
  negative: boolean;
}

/** The currency a mark ("₽", "KZT", "т", "смн.") names. */
function markCurrency(mark: string | undefined): Currency | undefined {
  if (mark === undefined) return undefined;
  return MARK_CURRENCY.find(({ pattern }) => pattern.test(mark))?.currency;
}

/**
 * Reads one amount ("+1 500,00 ₽", "1 500.00 р.", "1500р", "RUB 1500", "139 296,44т", "49.35 смн.")
 * with its currency. Returns undefined for anything else and for zero.
 */
export function readMoney(raw: string): Money | undefined {
  const match = WHOLE_AMOUNT.exec(raw);
  const number = match?.groups?.number;
  if (!match || !number) return undefined;
  const sign = match.groups?.sign ?? match.groups?.sign2;
  const fraction = /[.,](\d{1,2})$/.exec(number);
  const whole = (fraction ? number.slice(0, -fraction[0].length) : number).replace(/\D/g, '');
  const value = new Decimal(`${whole}.${fraction?.[1] ?? '0'}`);
  if (!value.gt(0)) return undefined;
  const currency = markCurrency(match.groups?.before ?? match.groups?.after ?? match.groups?.attached);
  const result: Money = { amount: value.toFixed(2), negative: sign !== undefined && sign !== '+' };
  if (currency) result.currency = currency;
  return result;
}

/**
 * Reads one credited amount written with its currency mark as a canonical decimal with two places
 * ("1500.00"). Returns undefined for anything else, for zero and for a negative (debit) amount.
 */
export function readAmount(raw: string): string | undefined {
  const money = readMoney(raw);
  return money?.currency && !money.negative ? money.amount : undefined;
}
