import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re } from './parser.js';

/**
 * Ozon Bank: SMS from "Ozon Bank" and app pushes. Credits say "Входящий перевод +N ₽" or
 * "Пополнение на N ₽"; the debit twin is "Исходящий перевод −N ₽".
 */
export const ozon = patternParser('ozon', [
  // Push: "Входящий перевод +1 500 ₽ от Иван И. через СБП"
  re`Входящий перевод ${AMOUNT}(?: от ${SENDER}${SENDER_END})?`,
  // SMS: "Ozon Банк: Пополнение на 2 000 ₽. Баланс 5 000 ₽"
  re`Пополнение(?: по СБП)? на ${AMOUNT}(?:\. Баланс:? ${BALANCE})?`,
  // SMS: "Зачисление +3 200,50 ₽ на карту *1234 от ИВАН И."
  re`(?:Зачисление|Поступление) ${AMOUNT} на карту \*\d{4}(?: от ${SENDER}${SENDER_END})?`,
  // Push: "Вам перевели 750 ₽ от Петр П."
  re`Вам перевели ${AMOUNT}(?: от ${SENDER}${SENDER_END})?`,
]);
