import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re } from './parser.js';

/**
 * Sberbank: SMS from 900 and SberBank Online pushes.
 * An SMS from 900 starts with the card or account and the time ("СЧЁТ1234 12:34",
 * "MIR-1234 10:05", "VISA1234 12.03.24 10:05"). An outgoing transfer has the same shape as an
 * incoming one but no payer: "СЧЁТ1234 18:26 перевод 1 000р Баланс: 3 879.81р" is money sent,
 * so a bare "Перевод" is only a credit when "от <payer>" follows.
 */
const HEAD = String.raw`(?:СЧ[ЕЁ]Т|MIR|VISA|ECMC|MAES|MC|КАРТА)-?\d{4} (?:\d\d\.\d\d(?:\.\d\d)? )?\d\d:\d\d`;
const THEN_BALANCE = String.raw`(?:.*? Баланс:? ${BALANCE})?`;

export const sberbank = patternParser('sberbank', [
  // SBP transfer from another bank: "СЧЁТ1234 12:34 Перевод из Т-Банк +1 500р от ИВАН И. Баланс: 25 300.50р"
  re`${HEAD} Перевод(?: по СБП)? из [^+\d]+? ${AMOUNT} от ${SENDER}${SENDER_END}${THEN_BALANCE}`,
  // Transfer from a Sber client: "СЧЁТ1234 00:21 Перевод 140р от Сергей С. Баланс: 879.81р"
  re`${HEAD} Перевод ${AMOUNT} от ${SENDER}${SENDER_END}${THEN_BALANCE}`,
  // Card-to-card, salary and other credits: "MIR-1234 10:05 зачисление 3500р Баланс: 10000р"
  re`${HEAD} Зачисление(?: зарплаты| пенсии| стипендии| аванса)? ${AMOUNT}(?: от ${SENDER}${SENDER_END})?${THEN_BALANCE}`,
  // Older SMS: "Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам 1000.00 RUB"
  re`Сбербанк Онлайн\. ${SENDER} перевел\(а\) вам ${AMOUNT}`,
  // App push: "Перевод от Ивана Ивановича И. +1 500 ₽ СберКарта •• 1234. Баланс 25 300,50 ₽"
  re`(?:Перевод|Зачисление)(?: по СБП)? от ${SENDER} (?=\+)${AMOUNT}${THEN_BALANCE}`,
]);
