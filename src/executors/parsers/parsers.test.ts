import { describe, expect, it } from 'vitest';
import { parseIncomingTransfer, type ParsedTransfer } from './index.js';

/**
 * Samples written the way each bank sends them: SMS (from 900, "T-Bank", "Alfa-Bank", "VTB",
 * "Ozon Bank", …) and app pushes as an executor's companion app forwards them (title and body,
 * sometimes on separate lines, with the no-break spaces the apps print in amounts).
 */
interface Positive {
  form: 'sms' | 'push';
  text: string;
  amount: string;
  sender?: string;
  balance?: string;
}

interface BankSamples {
  bank: string;
  positive: Positive[];
  /** Purchases, payments, outgoing transfers, declines, codes: never an incoming transfer. */
  negative: string[];
}

const SAMPLES: BankSamples[] = [
  {
    bank: 'sberbank',
    positive: [
      { form: 'sms', text: 'СЧЁТ1234 12:34 Перевод из Т-Банк +1 500р от ИВАН И. Баланс: 25 300.50р', amount: '1500.00', sender: 'ИВАН И.', balance: '25300.50' },
      { form: 'sms', text: 'СЧЁТ1234 12:34 Перевод по СБП из Альфа-Банк +700р от ПЕТР П. Баланс: 1 700р', amount: '700.00', sender: 'ПЕТР П.', balance: '1700.00' },
      { form: 'sms', text: 'MIR-1234 10:05 зачисление 3500р Баланс: 10000р', amount: '3500.00', balance: '10000.00' },
      { form: 'sms', text: 'СЧЁТ1234 00:21 Перевод 140р от Сергей С. Баланс: 879.81р', amount: '140.00', sender: 'Сергей С.', balance: '879.81' },
      { form: 'sms', text: 'MIR-1234 15:20 Перевод 2 750.50р от ОЛЬГА ПЕТРОВНА К. Баланс: 3 000р Сообщение: «за обед»', amount: '2750.50', sender: 'ОЛЬГА ПЕТРОВНА К.', balance: '3000.00' },
      { form: 'sms', text: 'VISA1234 12.03.24 09:41 Зачисление зарплаты 45 000р Баланс: 52 300.15р', amount: '45000.00', balance: '52300.15' },
      { form: 'sms', text: 'Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам 1 500.00 RUB', amount: '1500.00', sender: 'ИВАН ИВАНОВИЧ И.' },
      { form: 'push', text: 'Перевод от Ивана Ивановича И.\n+1\u00A0500\u00A0₽\nСберКарта •• 1234. Баланс 25\u00A0300,50\u00A0₽', amount: '1500.00', sender: 'Ивана Ивановича И.', balance: '25300.50' },
    ],
    negative: [
      'СЧЁТ1234 18:26 перевод 1 000р Баланс: 3 879.81р',
      'MIR-1234 19:02 Покупка 500р ПЯТЁРОЧКА Баланс: 12 345.67р',
      'MIR-1234 09:11 Оплата 300р Билайн Баланс: 12 045.67р',
      'СЧЁТ1234 10:00 Списание 1 500р Баланс: 3 000р',
      'Перевод 1 500р на карту 2202****5678 получателю ИВАН И. Код: 54321. Никому не сообщайте код.',
      'MIR-1234 11:36 Выплата кешбэка по СБП 65.54р CSHBCK_АО НСПК_В2С Баланс: 2 138.44р',
      'MIR-1234 12:00 Отказ: перевод 1 500р. Недостаточно средств. Баланс: 300р',
    ],
  },
  {
    bank: 'tinkoff',
    positive: [
      { form: 'sms', text: 'Пополнение, счет RUB. 1500 RUB. Иван И. Доступно 10250.40 RUB', amount: '1500.00', sender: 'Иван И.', balance: '10250.40' },
      { form: 'sms', text: 'Пополнение, счет RUB. 236 RUB. Доступно 713.79 RUB', amount: '236.00', balance: '713.79' },
      { form: 'sms', text: 'Пополнение, карта *4321. 2 500 RUB. Доступно 4 000 RUB', amount: '2500.00', balance: '4000.00' },
      { form: 'push', text: 'Пополнение на 1\u00A0500\u00A0₽, счет RUB. Иван И. Доступно 10\u00A0250,40\u00A0₽', amount: '1500.00', sender: 'Иван И.', balance: '10250.40' },
      { form: 'push', text: 'Т-Банк\nПополнение по СБП на 3 000 ₽, счет RUB. Мария С. Доступно 13 250,40 ₽', amount: '3000.00', sender: 'Мария С.', balance: '13250.40' },
      { form: 'push', text: 'Перевод от Ивана И. +1 500 ₽', amount: '1500.00', sender: 'Ивана И.' },
    ],
    negative: [
      'Покупка, карта *0964. 621.8 RUB. VKUSVILL 2. Доступно 499.28 RUB',
      'Перевод. Счет RUB. 500 RUB. Сергей С. Баланс 653.04 RUB',
      'Списание, счет RUB. 1500 RUB. Доступно 8750.40 RUB',
      'Перевод на 1 500 ₽, счет RUB. Иван И. Доступно 8 750,40 ₽',
      'Никому не говорите код 1234! Вход в Т-Банк в 17:30 19.08.23',
      'Отказ. Покупка, карта *1234. 5000 RUB. Недостаточно средств. Доступно 300 RUB',
      // A purchase refund credits the card but is not a payer's transfer.
      'Возврат. Счет RUB. 2070 RUB. Доступно 3000 RUB',
    ],
  },
  {
    bank: 'alfabank',
    positive: [
      { form: 'sms', text: 'Поступление 1 500,00 RUR на счет *1234 от ИВАН ИВАНОВ. Баланс 5 000,00 RUR', amount: '1500.00', sender: 'ИВАН ИВАНОВ', balance: '5000.00' },
      { form: 'sms', text: 'Счёт *1234 пополнен на 2 000,00 RUR. Баланс: 7 000,00 RUR', amount: '2000.00', balance: '7000.00' },
      { form: 'sms', text: 'Пополнение 3 200 ₽ на карту *5678. Остаток 10 200 ₽', amount: '3200.00', balance: '10200.00' },
      { form: 'sms', text: 'Karta *1234; Postuplenie 1500.00 RUR; Ostatok 6500.00 RUR; 12.03.2024 10:05', amount: '1500.00', balance: '6500.00' },
      { form: 'push', text: 'Вам перевели 1\u00A0500 ₽ от Ивана И. по СБП', amount: '1500.00', sender: 'Ивана И.' },
      { form: 'push', text: 'Альфа-Банк\nПоступление перевода по СБП 700 ₽ от ПЕТР П.', amount: '700.00', sender: 'ПЕТР П.' },
    ],
    negative: [
      '*1234 Покупка 500,00 RUR PYATEROCHKA. Баланс 4 500,00 RUR',
      'Списание 1 500,00 RUR со счета *1234. Баланс 3 500,00 RUR',
      'Перевод 1 500 ₽ на карту *5678. Баланс 3 500 ₽',
      'Karta *1234; Pokupka 500.00 RUR; Ostatok 4500.00 RUR; PYATEROCHKA',
      'Код для входа в Альфа-Онлайн: 4821. Никому его не сообщайте',
    ],
  },
  {
    bank: 'vtb',
    positive: [
      { form: 'sms', text: 'Поступление 1500.00р Счет*1234 от И. Иванов Баланс 4500р 12:01', amount: '1500.00', sender: 'И. Иванов', balance: '4500.00' },
      { form: 'sms', text: 'Поступление зарплаты 45 000р Счет*1234 Баланс 52 300.15р 09:00', amount: '45000.00', balance: '52300.15' },
      { form: 'sms', text: 'Зачисление 2 500р Карта*5678 Баланс 7 000р 14:20', amount: '2500.00', balance: '7000.00' },
      { form: 'push', text: 'ВТБ Онлайн | Поступление 55р Счет*0347 от Михаил Р. Баланс 143р 18:33', amount: '55.00', sender: 'Михаил Р.', balance: '143.00' },
      { form: 'push', text: 'Входящий перевод 1\u00A0500 ₽ по СБП от Ивана И. Баланс 4\u00A0500 ₽', amount: '1500.00', sender: 'Ивана И.', balance: '4500.00' },
      { form: 'push', text: 'Вам перевели 800 ₽ от Ольги К.', amount: '800.00', sender: 'Ольги К.' },
    ],
    negative: [
      'Списание 500р Счет*1234 PYATEROCHKA Баланс 4000р 12:05',
      'Оплата 300р Карта*1234 MTS Баланс 3700р 12:06',
      'Перевод 1500р Счет*1234 Баланс 2200р 12:10',
      'Код подтверждения: 123456. Никому не сообщайте этот код. ВТБ',
    ],
  },
  {
    bank: 'ozon',
    positive: [
      { form: 'push', text: 'Входящий перевод +1 500 ₽ от Иван И. через СБП', amount: '1500.00', sender: 'Иван И.' },
      { form: 'push', text: 'Ozon Банк\nВходящий перевод\n+12\u202F000 ₽ от Анна С. через СБП', amount: '12000.00', sender: 'Анна С.' },
      { form: 'push', text: 'Вам перевели 750 ₽ от Петр П.', amount: '750.00', sender: 'Петр П.' },
      { form: 'sms', text: 'Ozon Банк: Пополнение на 2 000 ₽. Баланс 5 000 ₽', amount: '2000.00', balance: '5000.00' },
      { form: 'sms', text: 'Зачисление +3 200,50 ₽ на карту *1234 от ИВАН И.', amount: '3200.50', sender: 'ИВАН И.' },
    ],
    negative: [
      'Покупка 1 299 ₽ OZON.RU. Баланс 3 701 ₽',
      'Исходящий перевод −1 500 ₽ Иван И. через СБП',
      'Код для входа в Ozon Банк: 1234. Никому не сообщайте',
      'Пополнение на 1 000 ₽ — и кешбэк 5% на всё в Ozon',
    ],
  },
  {
    bank: 'raiffeisenbank',
    positive: [
      { form: 'sms', text: 'Счет *1234: зачисление 1 500.00 RUR. Доступно 5 000.00 RUR', amount: '1500.00', balance: '5000.00' },
      { form: 'sms', text: 'Karta *1234; Zachislenie: 1500.00 RUR; Ostatok: 5000.00 RUR; 12.03.2024', amount: '1500.00', balance: '5000.00' },
      { form: 'push', text: 'Пополнение счета *1234 на 3 000,00 RUB. Доступно 8 000,00 RUB', amount: '3000.00', balance: '8000.00' },
      { form: 'push', text: 'Входящий перевод СБП 2 000 ₽ от Иван И.', amount: '2000.00', sender: 'Иван И.' },
    ],
    negative: [
      'Karta *1234; Pokupka: 500.00 RUR; Ostatok: 4500.00 RUR; 12.03.2024; PYATEROCHKA',
      'Счет *1234: списание 1 500.00 RUR. Доступно 3 500.00 RUR',
    ],
  },
  {
    bank: 'gazprombank',
    positive: [
      { form: 'sms', text: 'Telecard; Card1234; Zachislenie; Summa: 1500.00 RUR; 12.03.24 10:05; Dostupno: 5000.00 RUR', amount: '1500.00', balance: '5000.00' },
      { form: 'sms', text: 'Карта *1234 Зачисление 1 500.00 RUB Баланс 5 000.00 RUB', amount: '1500.00', balance: '5000.00' },
      { form: 'push', text: 'Поступил перевод по СБП 2 000 ₽ от Иван И.', amount: '2000.00', sender: 'Иван И.' },
      { form: 'push', text: 'Зачисление перевода 3 000 ₽ на счет *1234 от ПЕТР П. Доступно 9 000 ₽', amount: '3000.00', sender: 'ПЕТР П.', balance: '9000.00' },
    ],
    negative: [
      'Telecard; Card1234; Pokupka; Uspeshno; Summa: 500.00 RUR; PYATEROCHKA; 12.03.24 10:05; Dostupno: 4500.00 RUR',
      'Карта *1234 Списание 1 500.00 RUB Баланс 3 500.00 RUB',
    ],
  },
  {
    bank: 'sovkom',
    positive: [
      { form: 'sms', text: 'Зачисление 1500.00 RUB на карту *1234. Доступно 5000.00 RUB', amount: '1500.00', balance: '5000.00' },
      { form: 'sms', text: 'Karta *1234. Popolnenie 1500.00 RUB. Dostupno 5000.00 RUB', amount: '1500.00', balance: '5000.00' },
      { form: 'sms', text: 'Совкомбанк: пополнение карты *1234 на 700 ₽. Доступно 1 700 ₽', amount: '700.00', balance: '1700.00' },
      { form: 'push', text: 'Поступление по СБП 2 000 ₽ от Иван И. Доступно 7 000 ₽', amount: '2000.00', sender: 'Иван И.', balance: '7000.00' },
    ],
    negative: [
      'Karta *1234. Pokupka 500.00 RUB. PYATEROCHKA. Dostupno 4500.00 RUB',
      'Списание 1500.00 RUB с карты *1234. Доступно 3500.00 RUB',
    ],
  },
];

function expected(bank: string, sample: Positive): ParsedTransfer {
  const result: ParsedTransfer = { amount: sample.amount, currency: 'RUB', bank };
  if (sample.sender) result.sender = sample.sender;
  if (sample.balance) result.balance = sample.balance;
  return result;
}

describe.each(SAMPLES)('$bank', ({ bank, positive, negative }) => {
  it.each(positive)('reads the $form %#: $text', (sample) => {
    expect(parseIncomingTransfer(sample.text, { bank })).toStrictEqual(expected(bank, sample));
  });

  it.each(positive)('reads the amount of $form %# without a hint', (sample) => {
    expect(parseIncomingTransfer(sample.text)?.amount).toBe(sample.amount);
  });

  it.each(negative)('is not an incoming transfer: %s', (text) => {
    expect(parseIncomingTransfer(text, { bank })).toBeUndefined();
    expect(parseIncomingTransfer(text)).toBeUndefined();
  });

  it('has at least 4 positive and 2 negative samples', () => {
    expect(positive.length).toBeGreaterThanOrEqual(4);
    expect(negative.length).toBeGreaterThanOrEqual(2);
  });
});

describe('every sample against every bank', () => {
  const allNegative = SAMPLES.flatMap((s) => s.negative);
  it.each(SAMPLES.map((s) => s.bank))('no negative sample of any bank reads as a credit with hint %s', (bank) => {
    for (const text of allNegative) expect(parseIncomingTransfer(text, { bank }), text).toBeUndefined();
  });

  it.each(SAMPLES.map((s) => s.bank))('every positive sample keeps its amount with hint %s', (bank) => {
    for (const sample of SAMPLES.flatMap((s) => s.positive)) {
      expect(parseIncomingTransfer(sample.text, { bank })?.amount, sample.text).toBe(sample.amount);
    }
  });
});

describe('generic fallback', () => {
  it.each([
    ['pochta', 'Почта Банк. Зачислено 1 500,00 руб. от ИВАНОВ И.И. Доступно 2 500,00 руб.', { amount: '1500.00', sender: 'ИВАНОВ И.И.', balance: '2500.00' }],
    ['uralsib', 'Уралсиб: Поступили средства 3 750,25 RUB на карту *4455. Остаток: 10 000 RUB', { amount: '3750.25', balance: '10000.00' }],
    ['bspb', 'Банк Санкт-Петербург: зачислен перевод 1 200 р. от ИВАН И.', { amount: '1200.00', sender: 'ИВАН И.' }],
    ['ak_bars_bank', 'Мария М. перевела вам 600 ₽', { amount: '600.00' }],
  ])('reads a %s notification and reports the requisite’s bank', (bank, text, fields) => {
    expect(parseIncomingTransfer(text, { bank })).toStrictEqual({ currency: 'RUB', bank, ...fields });
    expect(parseIncomingTransfer(text)?.bank).toBe('unknown');
  });

  it.each([
    'Баланс: 12 345,67 ₽. Доступно 10 000 ₽',
    'Зачисление. Баланс: 5 000 ₽',
    'Пополнение счёта телефона +7 912 345-67-89 на 500 ₽',
    'Пополнение вклада «Накопительный» 10 000 ₽ со счёта *1234',
    'Пополните карту до 31.12 и получите 500 ₽ на счёт',
    'Поступление 1 500 USD на счёт *1234',
    // Confirming a top-up pulled from the user's own card in another bank: a code, not a credit.
    'Пополнение на 1 500 ₽ с карты *5678. Код: 4821',
    // A correction taking back a credit: the minus belongs to the amount.
    'Корректировка поступления: -1 500 ₽ по счёту *1234',
  ])('does not read %j', (text) => {
    expect(parseIncomingTransfer(text, { bank: 'mts' })).toBeUndefined();
  });
});

describe('parseIncomingTransfer', () => {
  it('tries the hinted bank first, then the others', () => {
    const text = 'СЧЁТ1234 12:34 Перевод из Т-Банк +1 500р от ИВАН И. Баланс: 25 300.50р';
    expect(parseIncomingTransfer(text, { bank: 'vtb' })?.bank).toBe('sberbank');
    // Both read the T-Bank-style push; the hint decides whose format it is.
    const push = 'Перевод от Ивана И. +1 500 ₽';
    expect(parseIncomingTransfer(push, { bank: 'tinkoff' })?.bank).toBe('tinkoff');
    expect(parseIncomingTransfer(push, { bank: 'sberbank' })?.bank).toBe('sberbank');
  });

  it('accepts common spellings of the bank code', () => {
    const push = 'Перевод от Ивана И. +1 500 ₽';
    expect(parseIncomingTransfer(push, { bank: 'T-Bank' })?.bank).toBe('tinkoff');
    expect(parseIncomingTransfer(push, { bank: ' Sber ' })?.bank).toBe('sberbank');
  });

  it('never takes the balance for the amount', () => {
    const parsed = parseIncomingTransfer('Пополнение на 1 500 ₽, счет RUB. Иван И. Доступно 1 500 000,40 ₽', { bank: 'tinkoff' });
    expect(parsed).toMatchObject({ amount: '1500.00', balance: '1500000.40' });
  });

  it('rejects empty and oversized texts', () => {
    expect(parseIncomingTransfer('')).toBeUndefined();
    expect(parseIncomingTransfer('   \n ')).toBeUndefined();
    expect(parseIncomingTransfer(`Зачисление 1 500 ₽ ${'x'.repeat(2000)}`)).toBeUndefined();
  });

  it('reads a long text with no amount to the end without backtracking away', () => {
    // Lazy names before "+N ₽" are the patterns' costliest part; the test timeout bounds it.
    expect(parseIncomingTransfer(`Перевод от ${'И. '.repeat(300)}`)).toBeUndefined();
  });
});
