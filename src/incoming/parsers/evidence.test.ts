import { describe, expect, it } from 'vitest';
import { parseIncomingCredit, readEvidence } from './index.js';

describe('readEvidence: the bank’s reference', () => {
  it.each([
    ['Пополнение карты ****2426\nСумма: 112.00 TJS - УСПЕШНО\nОтправитель: КОДИРОВ Г.\nДата: 27.09.2025 17:19:10\nКод операции: 105016158', '105016158'],
    ['Перевод по СБП от Иван И. +1 500 ₽. Номер операции 123456', '123456'],
    ['Зачисление 1500 р. СБП ID A41231234567890000000011700301', 'A41231234567890000000011700301'],
    ['Поступил перевод 2 000 ₽. ID операции в СБП: B5301-0930-1234', 'B530109301234'],
    ['Перевод 700 р. Квитанция № 1-2-345-678', '12345678'],
    ['Zachislen perevod 1500 RUB. Nomer operacii 99887766', '99887766'],
  ])('%s → %s', (text, reference) => {
    expect(readEvidence(text).reference).toBe(reference);
  });

  it('reads no reference where the text has none, nor a word or a short number after a label', () => {
    expect(readEvidence('Зачислено 1500 р. на карту *1234. Баланс 20000 р').reference).toBeUndefined();
    expect(readEvidence('Номер операции: смотрите в приложении. +1500 р').reference).toBeUndefined();
    expect(readEvidence('Код операции 12. Зачислено 1500 р').reference).toBeUndefined();
  });

  it('leaves what the parsers read of the money as it was', () => {
    const text = 'Перевод по СБП от Иван И. +1 500 ₽. Номер операции 123456';
    expect(parseIncomingCredit(text)).not.toHaveProperty('reference');
  });
});

describe('readEvidence: the payer', () => {
  it.each([
    ['Пополнение кошелька на 250.00 смн. Отправитель: Сафаров Ф. Баланс: 1 250.00 смн.', 'Сафаров Ф.'],
    ['Пополнение карты *6618 на 15 000,00 ₸. Отправитель: Айгерим Н. Доступно 40 000,00 ₸', 'Айгерим Н.'],
    ['Зачисление 5000 р. Отправитель: ИВАН ИВАНОВИЧ И. Баланс 7000 р', 'ИВАН ИВАНОВИЧ И.'],
    ['Поступил перевод 1500 р от Пётр С. на карту *1234', 'Пётр С.'],
  ])('%s → %s', (text, name) => {
    expect(readEvidence(text).payerName).toBe(name);
  });

  it('prefers the payer the bank’s form read', () => {
    expect(readEvidence('Отправитель: Сафаров Ф.', { sender: 'САФАРОВ Ф.' }).payerName).toBe('САФАРОВ Ф.');
  });

  it('reads no payer from a bank or a word', () => {
    expect(readEvidence('Перевод из Т-Банк +1500 ₽').payerName).toBeUndefined();
    expect(readEvidence('Зачислено 1500 р от пополнения').payerName).toBeUndefined();
  });
});
