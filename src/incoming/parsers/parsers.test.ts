import { describe, expect, it } from 'vitest';
import { BANK_FORMS, PARSER_TABLE } from './banks.js';
import { compilePattern, compileTable, type ParserTable, parseWith } from './engine.js';
import { bankOfSender, parseIncomingCredit, parseNotification } from './index.js';

/**
 * The engine and the public functions around the corpus (corpus.test.ts checks every sample):
 * how hints order the banks, what the template language accepts, and the refusals that do not
 * depend on any bank's wording.
 */

describe('parseIncomingCredit', () => {
  it('tries the hinted bank first, then the others', () => {
    const text = 'СЧЁТ1234 12:34 Перевод из Т-Банк +1 500р от ИВАН И. Баланс: 25 300.50р';
    expect(parseIncomingCredit(text, { bank: 'vtb' })?.bank).toBe('sberbank');
    // Both read the T-Bank-style push; the hint decides whose format it is.
    const push = 'Перевод от Ивана И. +1 500 ₽';
    expect(parseIncomingCredit(push, { bank: 'tinkoff' })?.bank).toBe('tinkoff');
    expect(parseIncomingCredit(push, { bank: 'sberbank' })?.bank).toBe('sberbank');
  });

  it('picks the bank and the form by the SMS sender or the app when the bank is unknown', () => {
    expect(bankOfSender('900')).toBe('sberbank');
    expect(bankOfSender(' mts-bank ')).toBe('mts');
    expect(bankOfSender('kz.kaspi.mobile')).toBe('kaspi');
    expect(bankOfSender('Vasl Pay')).toBe('vasl_bank');
    expect(bankOfSender('+79001234567')).toBeUndefined();
    // Alfa words an SMS and a push alike: only the sender tells which one came.
    const text = 'Поступление перевода по СБП 700 ₽ от ПЕТР П.';
    expect(parseIncomingCredit(text, { sender: 'Alfa-Bank' })).toMatchObject({ bank: 'alfabank', form: 'sms' });
    expect(parseIncomingCredit(text, { sender: 'ru.alfabank.mobile.android' })).toMatchObject({ bank: 'alfabank', form: 'push' });
  });

  it('accepts common spellings of the bank code', () => {
    const push = 'Перевод от Ивана И. +1 500 ₽';
    expect(parseIncomingCredit(push, { bank: 'T-Bank' })?.bank).toBe('tinkoff');
    const sms = 'Перевод на карту 5 000,00 RUB PEREVOD DR BANK Остаток: 5 122,50 RUB; *9131';
    expect(parseIncomingCredit(sms, { bank: ' MTSBank ' })?.bank).toBe('mts');
  });

  it('reads the generic shapes for the hinted bank, or "unknown"', () => {
    const text = 'Зачислено 1 500,00 руб. от ИВАНОВ И.И.';
    expect(parseIncomingCredit(text, { bank: 'mkb' })).toMatchObject({ amount: '1500.00', bank: 'mkb', sender: 'ИВАНОВ И.И.' });
    expect(parseIncomingCredit(text)).toMatchObject({ amount: '1500.00', bank: 'unknown' });
    expect(parseIncomingCredit(text)?.form).toBeUndefined();
  });

  it('never takes the balance for the amount', () => {
    const parsed = parseIncomingCredit('Пополнение на 1 500 ₽, счет RUB. Иван И. Доступно 1 500 000,40 ₽', { bank: 'tinkoff' });
    expect(parsed).toMatchObject({ amount: '1500.00', balance: '1500000.40' });
    // The MTS form puts the balance before the card: the amount is still the transfer.
    const mts = parseIncomingCredit('Перевод на карту 5 000,00 RUB PEREVOD DR BANK Остаток: 705 122,50 RUB; *9131', { bank: 'mts' });
    expect(mts).toMatchObject({ amount: '5000.00', balance: '705122.50', digits: '9131', digitsKind: 'card' });
  });

  it('reports the currency it read, and a balance only in that currency', () => {
    expect(parseIncomingCredit('Пополнение: 8000т\nДоступно: 146 003,44т', { bank: 'kaspi' })).toMatchObject({ amount: '8000.00', currency: 'KZT' });
    expect(parseIncomingCredit('Перевод от Сбербанк на сумму 49.35 смн.', { sender: 'Vasl Pay' })).toMatchObject({ currency: 'TJS' });
    const forte = parseIncomingCredit('Na kartu ***9166 sdelan perevod 2 000.00 RUB s karti ***8335. Ostatok 488 390.99 KZT.', { bank: 'forte' });
    expect(forte).toMatchObject({ amount: '2000.00', currency: 'RUB', digits: '9166' });
    expect(forte?.balance).toBeUndefined();
  });

  it('reports outgoing operations as such, never as money received', () => {
    const text = 'MIR-1234 19:02 Покупка 500р ПЯТЁРОЧКА Баланс: 12 345.67р';
    expect(parseIncomingCredit(text, { bank: 'sberbank' })).toBeUndefined();
    expect(parseNotification(text, { bank: 'sberbank' })).toMatchObject({ direction: 'outgoing', amount: '500.00', currency: 'RUB' });
  });

  it('rejects empty and oversized texts', () => {
    expect(parseIncomingCredit('')).toBeUndefined();
    expect(parseIncomingCredit('   \n ')).toBeUndefined();
    expect(parseIncomingCredit(`Зачисление 1 500 ₽ ${'x'.repeat(2000)}`)).toBeUndefined();
  });

  it('reads a long text with no amount to the end without backtracking away', () => {
    // Lazy names before "+N ₽" are the patterns' costliest part; the test timeout bounds it.
    expect(parseIncomingCredit(`Перевод от ${'И. '.repeat(300)}`)).toBeUndefined();
    expect(parseNotification(`Пополнение ${'1 '.repeat(450)}`)).toBeUndefined();
  });
});

describe('the template language', () => {
  it('compiles every pattern of the table', () => {
    expect(() => compileTable(PARSER_TABLE)).not.toThrow();
    expect(BANK_FORMS.every((f) => f.credit.length > 0 && f.senders.length > 0)).toBe(true);
  });

  it.each([
    ['Зачисление {total}', /unknown placeholder \{total\}/],
    ['Зачисление на карту {card}', /names \{amount\} or \{sum\}/],
    ['Зачисление {amount} и {sum}', /\{sum\} repeats the amount/],
    ['Карта {card} счёт {account}: {amount}', /\{account\} repeats the digits/],
  ])('refuses %j', (template, error) => {
    expect(() => compilePattern(template, 'incoming')).toThrow(error);
  });

  it('a new bank is one entry: its SMS is read with the digits, payer and balance it names', () => {
    const table: ParserTable = {
      ...PARSER_TABLE,
      forms: [
        {
          bank: 'example',
          form: 'sms',
          currency: 'TJS',
          senders: ['EXAMPLE'],
          credit: ['Карта {card} Приход {sum} от {person} Остаток {balance}'],
        },
      ],
    };
    const compiled = compileTable(table);
    expect(parseWith(compiled, 'Карта **5521 Приход 1 200,50 от Сафаров Ф. Остаток 3 000', { sender: 'example' })).toStrictEqual({
      direction: 'incoming',
      amount: '1200.50',
      currency: 'TJS',
      bank: 'example',
      form: 'sms',
      digits: '5521',
      digitsKind: 'card',
      sender: 'Сафаров Ф.',
      balance: '3000.00',
    });
    // The table's refusals still apply to the new bank.
    expect(parseWith(compiled, 'Карта **5521 Приход 1 200,50 от Сафаров Ф. Остаток 3 000. Код: 1234', {})).toBeUndefined();
  });

  it("an unmarked {sum} takes the form's currency; a form reads only the currencies it accepts", () => {
    const only = compileTable({ ...PARSER_TABLE, generic: [], forms: [{ bank: 'k', form: 'sms', currency: 'KZT', senders: ['K'], credit: ['Приход {sum}'] }] });
    expect(parseWith(only, 'Приход 500', { bank: 'k' })).toMatchObject({ amount: '500.00', currency: 'KZT' });
    expect(parseWith(only, 'Приход 500 ₸', { bank: 'k' })).toMatchObject({ amount: '500.00', currency: 'KZT' });
    expect(parseWith(only, 'Приход 500 RUB', { bank: 'k' })).toBeUndefined();
    const both = compileTable({
      ...PARSER_TABLE,
      generic: [],
      forms: [{ bank: 'k', form: 'sms', currency: 'KZT', accepts: ['KZT', 'RUB'], senders: ['K'], credit: ['Приход {sum}'] }],
    });
    expect(parseWith(both, 'Приход 500 RUB', { bank: 'k' })).toMatchObject({ amount: '500.00', currency: 'RUB' });
    // A debit amount written with a minus never reads as a credit.
    expect(parseWith(both, 'Приход -500', { bank: 'k' })).toBeUndefined();
  });
});
