import { AMOUNT, BALANCE, SENDER, SENDER_END, patternParser, re } from './parser.js';

/** Raiffeisenbank: SMS from "Raiffeisen" and app pushes. */
export const raiffeisen = patternParser('raiffeisenbank', [
  // SMS: "Счет *1234: зачисление 1 500.00 RUR. Доступно 5 000.00 RUR"
  re`Сч[её]т \*\d{4}: зачисление ${AMOUNT}(?:\. Доступно:? ${BALANCE})?`,
  // Push: "Пополнение счета *1234 на 3 000,00 RUB. Доступно 8 000,00 RUB"
  re`Пополнение сч[её]та \*\d{4} на ${AMOUNT}(?:\. Доступно:? ${BALANCE})?`,
  // Push: "Входящий перевод СБП 2 000 ₽ от Иван И."
  re`Входящий перевод СБП ${AMOUNT}(?: от ${SENDER}${SENDER_END})?`,
  // Transliterated SMS: "Karta *1234; Zachislenie: 1500.00 RUR; Ostatok: 5000.00 RUR; 12.03.2024"
  re`Karta \*\d{4}; Zachislenie: ${AMOUNT}(?:; Ostatok: ${BALANCE})?`,
]);
