import { alfabank } from './alfabank.js';
import { gazprombank } from './gazprombank.js';
import { parseGeneric } from './generic.js';
import { ozon } from './ozon.js';
import type { BankParser, ParsedTransfer } from './parser.js';
import { raiffeisen } from './raiffeisen.js';
import { sberbank } from './sberbank.js';
import { sovcombank } from './sovcombank.js';
import { tbank } from './tbank.js';
import { vtb } from './vtb.js';

export type { ParsedTransfer } from './parser.js';
export { readAmount } from './amount.js';

/** In the order tried when the requisite's bank has no parser or its parser does not match. */
const BANK_PARSERS: readonly BankParser[] = [sberbank, tbank, alfabank, vtb, ozon, raiffeisen, gazprombank, sovcombank];

/** Names an executor's app may send instead of the directory code. */
const ALIASES: Record<string, string> = {
  sber: 'sberbank', tbank: 'tinkoff', 't-bank': 'tinkoff', alfa: 'alfabank', 'alfa-bank': 'alfabank',
  raiffeisen: 'raiffeisenbank', sovcombank: 'sovkom',
};

/**
 * Texts that are never a payer's transfer whatever else they say: one-time codes (which often
 * repeat the transfer being confirmed, "Перевод 1 500р … Код: 12345"), declines and cancelled
 * operations, cashback and bonus credits, adverts ("Пополнение на 1 000 ₽ — кешбэк 5%").
 * When in doubt we do not parse: an unmatched notification is kept for the operator.
 */
const NEVER_A_CREDIT = [
  /никому не (?:сообщайте|говорите|называйте|передавайте|показывайте)/i,
  /(?<![а-яё])код(?![а-яё])/i,
  /(?<![а-яё])(?:отказ|отклон[её]н|недостаточно средств|не выполнен|не зачислен|отмен[её]н)/i,
  /кешб[эе]к|cashback|бонус|(?<![а-яё])акци[яи]|получите|розыгрыш|\d ?%/i,
];

/** A bank notification is a few hundred characters; longer text is not one. */
const MAX_LENGTH = 1000;

/** One line, ordinary spaces and a plain hyphen-minus, as the patterns expect. */
function normalize(text: string): string {
  return text
    .replace(/[\u00A0\u202F\u2009\u2007]/g, ' ')
    .replace(/[−–]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Reads the incoming transfer in the text of a bank SMS or push notification, or undefined when
 * the text is not an incoming transfer (a purchase, a payment, an outgoing transfer, a code, an
 * advert) or its format is unknown. `hint.bank` (the requisite's bank code) picks that bank's
 * parser first; then every other bank's, then the generic shapes.
 */
export function parseIncomingTransfer(text: string, hint?: { bank?: string }): ParsedTransfer | undefined {
  const normalized = normalize(text);
  if (!normalized || normalized.length > MAX_LENGTH) return undefined;
  if (NEVER_A_CREDIT.some((pattern) => pattern.test(normalized))) return undefined;
  const code = hint?.bank?.trim().toLowerCase() || undefined;
  const bank = code === undefined ? undefined : (ALIASES[code] ?? code);
  const own = BANK_PARSERS.find((parser) => parser.bank === bank);
  const order = own ? [own, ...BANK_PARSERS.filter((parser) => parser !== own)] : BANK_PARSERS;
  for (const parser of order) {
    const parsed = parser.parse(normalized);
    if (parsed) return parsed;
  }
  return parseGeneric(normalized, bank);
}
