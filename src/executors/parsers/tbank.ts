import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re } from './parser.js';

/**
 * T-Bank (Tinkoff): SMS from "T-Bank"/"Tinkoff" and app pushes. Every credit starts with
 * "Пополнение"; money sent starts with "Перевод." or "Списание", card payments with "Покупка".
 */
export const tbank = patternParser('tinkoff', [
  // SMS: "Пополнение, счет RUB. 1500 RUB. Иван И. Доступно 10250.40 RUB" (the payer is optional)
  re`Пополнение(?: по СБП)?, (?:сч[её]т RUB|карта \*\d{4})\. ${AMOUNT}\.(?: ${SENDER}${SENDER_END})? (?:Доступно|Баланс) ${BALANCE}`,
  // Push: "Пополнение на 1 500 ₽, счет RUB. Иван И. Доступно 10 250,40 ₽"
  re`Пополнение(?: по СБП)? на ${AMOUNT}, (?:сч[её]т RUB|карта \*\d{4})\.(?: ${SENDER}${SENDER_END})?(?:\.? (?:Доступно|Баланс) ${BALANCE})?`,
  // Push: "Перевод от Ивана И. +1 500 ₽", "Входящий перевод от Ивана И. +1 500 ₽"
  re`(?:Входящий )?перевод(?: по СБП)? от ${SENDER} (?=\+)${AMOUNT}(?:.*? (?:Доступно|Баланс) ${BALANCE})?`,
]);
