import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re } from './parser.js';

/** Where an Alfa notification names the balance. */
const THEN_BALANCE = String.raw`(?:\.? (?:Баланс|Остаток|Доступно):? ${BALANCE})?`;

/**
 * Alfa-Bank: SMS from "Alfa-Bank" and Alfa-Online pushes. Credits say "Поступление" or
 * "Пополнение", often with the account and the payer; debits say "Покупка", "Списание" or
 * "Перевод … на карту".
 */
export const alfabank = patternParser('alfabank', [
  // SMS: "Поступление 1 500,00 RUR на счет *1234 от ИВАН ИВАНОВ. Баланс 5 000,00 RUR"
  re`(?:Поступление|Пополнение|Зачисление)(?: перевода)?(?: по СБП)? ${AMOUNT}(?: на (?:сч[её]т|карту) \*\d{4})?(?: от ${SENDER}${SENDER_END})?(?=\.? (?:Баланс|Остаток|Доступно)|\.?$)${THEN_BALANCE}`,
  // SMS: "Счёт *1234 пополнен на 2 000,00 RUR. Баланс: 7 000,00 RUR"
  re`Сч[её]т \*\d{4} пополнен на ${AMOUNT}${THEN_BALANCE}`,
  // Push: "Вам перевели 1 500 ₽ от Ивана И. по СБП", "Вам поступил перевод 700 ₽ от Петра П."
  re`Вам (?:перевели|поступил перевод) ${AMOUNT}(?: от ${SENDER}${SENDER_END})?`,
  // Transliterated SMS: "Karta *1234; Postuplenie 1500.00 RUR; Ostatok 6500.00 RUR; 12.03.2024 10:05"
  re`(?:Postuplenie|Popolnenie):? ${AMOUNT}(?:;.*?(?:Ostatok|Dostupno):? ${BALANCE})?`,
]);
