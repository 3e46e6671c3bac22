import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re } from './parser.js';

/**
 * VTB: SMS from "VTB" and VTB Online pushes. An SMS names the amount, then the account or card
 * ("Счет*1234"), the payer, the balance and the time; debits say "Списание", "Оплата" or
 * "Перевод".
 */
export const vtb = patternParser('vtb', [
  // SMS/push: "Поступление 1500.00р Счет*1234 от И. Иванов Баланс 4500р 12:01",
  // "ВТБ Онлайн | Поступление 55р Счет*0347 от Михаил Р. Баланс 143р 18:33"
  re`(?:Поступление|Зачисление)(?: зарплаты| пенсии)? ${AMOUNT} (?:Сч[её]т|Карта) ?\*\d{4}(?: от ${SENDER}${SENDER_END})? Баланс ${BALANCE}`,
  // Push: "Входящий перевод 1 500 ₽ по СБП от Ивана И. Баланс 4 500 ₽", "Вам перевели 800 ₽ от Ольги К."
  re`(?:Входящий перевод|Вам перевели)(?: по СБП)? ${AMOUNT}(?: (?:по|через) СБП)?(?: от ${SENDER}${SENDER_END})?(?:.*? Баланс:? ${BALANCE})?`,
]);
