import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re } from './parser.js';

/** Gazprombank: SMS from "Telecard"/"GPB" and app pushes. */
export const gazprombank = patternParser('gazprombank', [
  // Telecard SMS: "Telecard; Card1234; Zachislenie; Summa: 1500.00 RUR; 12.03.24 10:05; Dostupno: 5000.00 RUR"
  re`Telecard; Card\d{4}; (?:Popolnenie|Zachislenie)(?:; Uspeshno)?(?:; Summa)?:? ${AMOUNT}(?:;.*?Dostupno: ${BALANCE})?`,
  // SMS: "Карта *1234 Зачисление 1 500.00 RUB Баланс 5 000.00 RUB"
  re`Карта \*\d{4} Зачисление ${AMOUNT}(?: Баланс ${BALANCE})?`,
  // Push: "Поступил перевод по СБП 2 000 ₽ от Иван И."
  re`Поступил перевод(?: по СБП)? ${AMOUNT}(?: от ${SENDER}${SENDER_END})?`,
  // Push: "Зачисление перевода 3 000 ₽ на счет *1234 от ПЕТР П. Доступно 9 000 ₽"
  re`Зачисление перевода ${AMOUNT} на сч[её]т \*\d{4}(?: от ${SENDER}${SENDER_END})?(?:\.? Доступно ${BALANCE})?`,
]);
