import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re, type ParsedTransfer } from './parser.js';

/**
 * Up to 40 characters between a credit word and its amount ("Поступление перевода по СБП на
 * карту *1234 1 500 ₽"), never crossing a balance word nor any other number, so the balance
 * figure of "Пополнение. Баланс: 5 000 ₽" is not taken for the amount.
 */
const GAP = String.raw`(?:(?!баланс|доступно|остаток)(?:\*\d{4}|[^\d+])){0,40}?`;
const THEN_BALANCE = String.raw`(?:.*? (?:Баланс|Доступно|Остаток):? ${BALANCE})?`;

/**
 * Without a bank's exact format, a text that also speaks of a debit is not trusted: a phone or
 * savings top-up ("Пополнение счёта телефона … 500 ₽", "Пополнение вклада 10 000 ₽ со счёта")
 * is money leaving the card.
 */
const DEBIT = /списан|покупк|оплат|телефон|вклад|накопительн|копилк/i;

const patterns = patternParser('unknown', [
  // "Перевод от Иван И. +1 500 ₽", "Поступление по СБП от ИВАН И. +1500 RUB"
  re`(?:Перевод|Поступление|Зачисление|Пополнение)(?: по СБП)? от ${SENDER} (?=\+)${AMOUNT}${THEN_BALANCE}`,
  // "Вам перевели 1 500 ₽ от Ивана И.", "Иван И. перевел(а) вам 1500 RUB"
  re`(?:Вам перевели|перевела? вам|перевел\(а\) вам) ${AMOUNT}(?: от ${SENDER}${SENDER_END})?${THEN_BALANCE}`,
  // "Зачислено 1 500,00 руб. от ИВАНОВ И.И.", "Поступили средства 3 750,25 RUB на карту *4455"
  // (stems: Зачислен-ие/-о, Поступ-ление/-ил/-или, Пополнен-ие/-а)
  re`(?:Зачислен|Поступ|Пополнен|Входящий перевод)${GAP}${AMOUNT}(?: от ${SENDER}${SENDER_END})?${THEN_BALANCE}`,
]);

/**
 * Fallback for banks without a parser of their own: the common Russian shapes of a credit.
 * `bank` is the caller's (the requisite's bank) since the text does not say it reliably.
 */
export function parseGeneric(text: string, bank = 'unknown'): ParsedTransfer | undefined {
  if (DEBIT.test(text)) return undefined;
  const parsed = patterns.parse(text);
  return parsed && { ...parsed, bank };
}
