import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re } from './parser.js';

/** Sovcombank (and its Halva card): SMS from "SOVCOMBANK"/"Halva" and app pushes. */
export const sovcombank = patternParser('sovkom', [
  // SMS: "Зачисление 1500.00 RUB на карту *1234. Доступно 5000.00 RUB"
  re`(?:Зачисление|Пополнение) ${AMOUNT} на карту \*\d{4}(?:\. Доступно:? ${BALANCE})?`,
  // Halva SMS: "Karta *1234. Popolnenie 1500.00 RUB. Dostupno 5000.00 RUB"
  re`Karta \*\d{4}\. (?:Popolnenie|Zachislenie) ${AMOUNT}(?:\. Dostupno ${BALANCE})?`,
  // Push: "Поступление по СБП 2 000 ₽ от Иван И. Доступно 7 000 ₽"
  re`Поступление по СБП ${AMOUNT}(?: от ${SENDER}${SENDER_END})?(?:\.? Доступно ${BALANCE})?`,
  // SMS: "Совкомбанк: пополнение карты *1234 на 700 ₽. Доступно 1 700 ₽"
  re`пополнение карты \*\d{4} на ${AMOUNT}(?:\. Доступно ${BALANCE})?`,
]);
