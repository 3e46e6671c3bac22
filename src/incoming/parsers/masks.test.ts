import { describe, expect, it } from 'vitest';
import { findMasks, recipientMask } from './masks.js';

describe('the recipient’s digits, wherever the text shows them', () => {
  it.each([
    ['Зачисление 500 ₽ *1234', '1234', 'card'],
    ['МИР-1234 10:05 зачисление', '1234', 'card'],
    ['MIR1234 10:05 зачисление', '1234', 'card'],
    ['МИР8105 10:59 Любовь П.', '8105', 'card'],
    ['МИР Сберкарта8105 26.07.23 зачислен перевод', '8105', 'card'],
    ['Visa Classic9410 12.08.20 зачислен перевод', '9410', 'card'],
    ['Telecard; Card1234; Zachislenie', '1234', 'card'],
    ['Popolnenie, Karta:7999 summa:25580.18 RUR', '7999', 'card'],
    ['Пополнение карта ****1234', '1234', 'card'],
    ['Карта 4*8274 Зачислено', '8274', 'card'],
    ['Операция по карте 440563**0769', '0769', 'card'],
    ['Перевод на карту 2200-XXXX-XXXX-3474', '3474', 'card'],
    ['СберКарта •• 1234. Баланс', '1234', 'card'],
    ['СЧЁТ1234 12:34 Перевод', '1234', 'account'],
    ['СЧЁТ0000 12:34', '0000', 'account'],
    ['ПЛАТ.СЧЕТ*1389 12:20', '1389', 'account'],
    ['Сбер.счёт *3473 16:17', '3473', 'account'],
    ['Зачисление СБП 10р на сч*0707 от', '0707', 'account'],
    ['СБП. Получен перевод. Счет 0239. Зачислено', '0239', 'account'],
    ['Schet A*891: Popolnenie', '891', 'account'],
    ['Popolnenie 286328.00 KZT K**041', '041', 'account'],
    ['Postupilo 201073 KZT na schet #06334', '06334', 'account'],
    ['Счёт договора 20770680 пополнен', '20770680', 'account'],
    ['Поступление на счет 4081**4363 8000.00 RUR', '4363', 'account'],
    ['Перевод по СБП на номер +7 *** ***-12-34', '1234', 'phone'],
  ])('%s → %s', (text, digits, kind) => {
    expect(recipientMask(text)).toMatchObject({ digits, kind });
  });

  it("leaves the payer's card, account and phone out", () => {
    expect(recipientMask('Na kartu ***9166 sdelan perevod 2 000.00 RUB s karti ***8335.')?.digits).toBe('9166');
    expect(recipientMask('Перевод со счета 4081**4363 на карту *6975: 2000.00 RUR')?.digits).toBe('6975');
    expect(recipientMask('Zachislen perevod SBP summa 10.00 RUR ot Maksim S. tel +7 987 ***-28-48')).toBeUndefined();
    expect(findMasks('с карты *1111 на карту *2222').map((m) => m.digits)).toEqual(['2222']);
  });

  it('reads no digits where there are none: dates, times, amounts', () => {
    expect(recipientMask('17.08.2024 14:52 Зачислено 1 500.00 RUB, баланс 2 000 RUB')).toBeUndefined();
  });
});
