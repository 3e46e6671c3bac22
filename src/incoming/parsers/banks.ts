import type { BankForm, ParserTable } from './engine.js';

/**
 * The parser table: every bank's SMS and push formats as data. Adding a bank or a form is adding
 * an entry here (and its samples to corpus/<bank>.tsv); the matching code (engine.ts) never
 * changes for one. The template language of the patterns is described in engine.ts.
 *
 * Where a form's samples come from is in its corpus file's `source` column: public SMS-parser
 * projects and bank help pages, or "derived" where no public sample was found.
 *
 * Rules the patterns keep: a credit pattern names the words of an incoming credit, so it never
 * matches a purchase, a payment, a fee, a withdrawal or an outgoing transfer; the balance is
 * always its own placeholder after a balance word; a shape that could be either direction is
 * left out (the text is refused and kept for the operator rather than guessed).
 */

/** Patterns are written with single backslashes. */
const r = String.raw;

/** Optional balance after the amount, anywhere later in the text. */
const BALANCE = r`(?:.*? (?:Баланс|Доступно|Остаток|Доступный остаток):? {balance})?`;

export const BANK_FORMS: readonly BankForm[] = [
  // ---------------------------------------------------------------- Russia
  {
    bank: 'sberbank',
    form: 'sms',
    currency: 'RUB',
    senders: ['900', 'SberBank', 'Сбербанк', 'СберБанк'],
    credit: [
      // "СЧЁТ1234 12:34 Перевод из Т-Банк +1 500р от ИВАН И. Баланс: 25 300.50р"
      r`(?:ПЛАТ\.)?СЧ[ЕЁ]Т{account} (?:{date} )?{time} Перевод(?: по СБП)? из {words} {amount} от {name}{end}(?:.*? Баланс:? {balance})?`,
      r`(?:MIR|VISA|ECMC|MAES|MC|ORPS)-?{card} (?:{date} )?{time} Перевод(?: по СБП)? из {words} {amount} от {name}{end}(?:.*? Баланс:? {balance})?`,
      // "СЧЁТ6334 08.05.25 зачислен перевод по СБП 25000р из Альфа-Банк от МАКСИМ ИВАНОВИЧ Е."
      r`(?:ПЛАТ\.)?СЧ[ЕЁ]Т{account} (?:{date} )?(?:{time} )?зачислен перевод по СБП {amount} из {words} от {name}{end}`,
      // "СЧЁТ1234 00:21 Перевод 140р от Сергей С. Баланс: 879.81р" (without "от" it is money sent)
      r`(?:ПЛАТ\.)?СЧ[ЕЁ]Т{account} (?:{date} )?{time} Перевод {amount} от {name}{end}(?:.*? Баланс:? {balance})?`,
      r`(?:MIR|VISA|ECMC|MAES|MC|ORPS)-?{card} (?:{date} )?{time} Перевод {amount} от {name}{end}(?:.*? Баланс:? {balance})?`,
      // "MIR-1234 10:05 зачисление 3500р Баланс: 10000р", "… зачисление 500р Т-Bank Баланс: …"
      r`(?:ПЛАТ\.)?СЧ[ЕЁ]Т{account} (?:{date} )?{time} зачисление(?: зарплаты| пенсии| стипендии| аванса| премии)? {amount}(?: от {name}{end})?(?:.*? Баланс:? {balance})?`,
      r`(?:MIR|VISA|ECMC|MAES|MC|ORPS)-?{card} (?:{date} )?{time} зачисление(?: зарплаты| пенсии| стипендии| аванса| премии)? {amount}(?: от {name}{end})?(?:.*? Баланс:? {balance})?`,
      // "ПЛАТ.СЧЕТ6334 14:09 Роман Н. перевел(а) вам 10 000р."
      r`(?:ПЛАТ\.)?СЧ[ЕЁ]Т{account} (?:{date} )?{time} {person} перевел\(а\) вам {amount}`,
      r`(?:MIR|VISA|ECMC|MAES|MC|ORPS)-?{card} (?:{date} )?{time} {person} перевел\(а\) вам {amount}`,
      // Older SMS: "Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам 1000.00 RUB"
      r`Сбербанк Онлайн\. {name} перевел\(а\) вам {amount}`,
    ],
    debit: [
      // "Исполнение Автоплатежа "…" прошло успешно. Ваш счет на сумму 66.56 руб. с карты *1404 оплачен."
      r`Ваш сч[её]т на сумму {amount}(?: с карты {card})? оплачен`,
    ],
    // Money from the client's own deposit or savings is not a payer's transfer.
    unless: [r`с Вашего вклада|копилк|вклад|vklad|займ|kredita|кредита`],
  },
  {
    bank: 'sberbank',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.sberbankmobile', 'СберБанк Онлайн', 'Сбербанк Онлайн'],
    credit: [
      // "Перевод от МАРИНА АЛЕКСАНДРОВНА Д. Банк Уралсиб + 600 ₽ - Баланс: 6 223,34 ₽ СЧЕТ • 7533"
      r`(?:Перевод|Зачисление)(?: по СБП)? от {person}(?: {words})? (?=\+){amount}(?: -)? Баланс:? {balance} (?:СЧ[ЕЁ]Т|Платёжный счёт) ?{account}`,
      // "Перевод от Ивана Ивановича И. +1 500 ₽ СберКарта •• 1234. Баланс 25 300,50 ₽",
      // "Перевод от НАРЕК ДАВИДОВИЧ Б. + 100 ₽ Visa •• 2059 Баланс: 2 012,47 ₽"
      r`(?:Перевод|Зачисление)(?: по СБП)? от {person}(?: {words})? (?=\+){amount}(?: (?:СберКарта|Visa|MIR|Мир|Mastercard|Maestro) ?{card})?\.?(?: -)?(?: Баланс:? {balance})?`,
    ],
  },
  {
    bank: 'tinkoff',
    form: 'sms',
    currency: 'RUB',
    senders: ['T-Bank', 'Tinkoff', 'Т-Банк', 'TBank'],
    credit: [
      // "Пополнение, счет RUB. 1500 RUB. Иван И. Доступно 10250.40 RUB" (the payer is optional)
      r`Пополнение(?: по СБП)?, сч[её]т RUB\. {amount}\.(?: {name}{end})? (?:Доступно|Баланс) {balance}`,
      r`Пополнение(?: по СБП)?, карта {card}\. {amount}\.(?: {name}{end})? (?:Доступно|Баланс) {balance}`,
      // "Пополнение. Карта *9930. 5000 RUB. Рапида. Доступно 44469.61 RUB"
      r`Пополнение\. Карта {card}\. {amount}\. {words}\. (?:Доступно|Баланс) {balance}`,
      // "Popolnenie. Karta *9930. Summa 8000 RUB. Card2Card. 07.12.2017 15:31. Dostupno 61967.41 RUB"
      r`Popolnenie\. Karta {card}\. Summa {sum}\.(?:.*? Dostupno {balance})?`,
    ],
  },
  {
    bank: 'tinkoff',
    form: 'push',
    currency: 'RUB',
    // The title of a T-Bank push names the payer's bank: "Альфа-Банк | Пополнение на 181 ₽, …".
    senders: ['com.idamob.tinkoff.android', 'Т-Банк', 'Тинькофф'],
    credit: [
      // "Пополнение на 1 500 ₽, счет RUB. Иван И. Доступно 10 250,40 ₽"
      r`Пополнение(?: по СБП)? на {amount}, сч[её]т RUB\.(?: {name}{end})?(?:\.? (?:Доступно|Баланс) {balance})?`,
      r`Пополнение(?: по СБП)? на {amount}, карта {card}\.(?: {name}{end})?(?:\.? (?:Доступно|Баланс) {balance})?`,
      // "Перевод от Ивана И. +1 500 ₽", "Входящий перевод от Ивана И. +1 500 ₽"
      r`(?:Входящий )?перевод(?: по СБП)? от {name} (?=\+){amount}(?:.*? (?:Доступно|Баланс) {balance})?`,
    ],
  },
  {
    bank: 'alfabank',
    form: 'sms',
    currency: 'RUB',
    senders: ['Alfa-Bank', 'AlfaBank', 'Альфа-Банк'],
    credit: [
      // "Поступление 1 500,00 RUR на счет *1234 от ИВАН ИВАНОВ. Баланс 5 000,00 RUR"
      r`(?:Поступление|Пополнение|Зачисление)(?: перевода)?(?: по СБП)? {amount} на сч[её]т {account}(?: от {name}{end})?(?=\.? (?:Баланс|Остаток|Доступно)|\.?$)(?:\.? (?:Баланс|Остаток|Доступно):? {balance})?`,
      // "Пополнение 3 200 ₽ на карту *5678. Остаток 10 200 ₽"
      r`(?:Поступление|Пополнение|Зачисление)(?: перевода)?(?: по СБП)? {amount}(?: на карту {card})?(?: от {name}{end})?(?=\.? (?:Баланс|Остаток|Доступно)|\.?$)(?:\.? (?:Баланс|Остаток|Доступно):? {balance})?`,
      // "Счёт *1234 пополнен на 2 000,00 RUR. Баланс: 7 000,00 RUR"
      r`Сч[её]т {account} пополнен на {amount}(?:\.? (?:Баланс|Остаток|Доступно):? {balance})?`,
      // "Karta *1234; Postuplenie 1500.00 RUR; Ostatok 6500.00 RUR; 12.03.2024 10:05"
      r`Karta {card}; (?:Postuplenie|Popolnenie):? {amount}(?:;.*?(?:Ostatok|Dostupno):? {balance})?`,
      // "5*9857; Postupleniye; Summa: 1300,00 RUR; Ostatok: 137482,27 RUR; 03.12.2017"
      r`{card};? Postupleniye;? Summa: {sum};? Ostatok: {balance}`,
    ],
  },
  {
    bank: 'alfabank',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.alfabank.mobile.android', 'Альфа-Онлайн', 'Альфа-Банк'],
    credit: [
      // "Вам перевели 1 500 ₽ от Ивана И. по СБП", "Вам поступил перевод 700 ₽ от Петра П."
      r`Вам (?:перевели|поступил перевод) {amount}(?: от {name}{end})?`,
      // "Поступление перевода по СБП 700 ₽ от ПЕТР П."
      r`(?:Поступление|Зачисление) перевода(?: по СБП)? {amount}(?: от {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'vtb',
    form: 'sms',
    currency: 'RUB',
    senders: ['VTB', 'VTB24', 'ВТБ'],
    credit: [
      // "Поступление 1500.00р Счет*1234 от И. Иванов Баланс 4500р 12:01"
      r`(?:Поступление|Зачисление)(?: зарплаты| пенсии)? {amount} Сч[её]т ?{account}(?: от {name}{end})? Баланс {balance}`,
      r`(?:Поступление|Зачисление)(?: зарплаты| пенсии)? {amount} Карта ?{card}(?: от {name}{end})? Баланс {balance}`,
      // "ВТБ: зачисление 10000р. Отправитель: ООО КОМПАНИЯ"
      r`зачисление {amount}\.? Отправитель: {name}{end}`,
      // "Schet *3318: postuplenie zarabotnoy plati 9200.00 RUB; 20.12.2017 19:38:07; Dostupno 9886.55 RUB"
      r`Schet {account}: postuplenie(?: zarabotnoy plati)? ?{amount};.*? dostupno {balance}`,
      // "Karta *0755: zachislenie 9205.00 RUR; 35, MIYASNITSKAYA; 28.12.2017 12:13, dostupno 160988.72 RUR"
      r`Karta {card}: (?:zachislenie|vnesenie) {amount};.*? dostupno {balance}`,
      // "Karta *1602 Popolnenie, 11200.00 RUR 16.01.18 10:51 MSK Ostatok 11355.62 RUR"
      r`Karta {card} (?:Beznalichnoe )?Popolnenie,? {amount}.*? Ostatok {balance}`,
      // "Postuplenie 10589.50 RUB Schet *1362 ot UFK po … Balans 22080.23 RUB 15:57"
      r`Postuplenie(?: zarabotnoy plati)? {amount} Schet {account}(?: ot {name})? Balans {balance}`,
    ],
  },
  {
    bank: 'vtb',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.vtb24.mobilebanking.android', 'ВТБ Онлайн'],
    credit: [
      // "ВТБ Онлайн | Поступление 55р Счет*0347 от Михаил Р. Баланс 143р 18:33"
      r`Поступление {amount} Сч[её]т ?{account}(?: от {name}{end})? Баланс {balance}`,
      // "Входящий перевод 1 500 ₽ по СБП от Ивана И. Баланс 4 500 ₽", "Вам перевели 800 ₽ от Ольги К."
      r`(?:Входящий перевод|Вам перевели)(?: по СБП)? {amount}(?: (?:по|через) СБП)?(?: от {name}{end})?(?:.*? Баланс:? {balance})?`,
    ],
  },
  {
    bank: 'raiffeisenbank',
    form: 'sms',
    currency: 'RUB',
    senders: ['Raiffeisen', 'Raiffeisenbank', 'Райффайзен'],
    credit: [
      // "Счет *1234: зачисление 1 500.00 RUR. Доступно 5 000.00 RUR"
      r`Сч[её]т {account}: зачисление {amount}(?:\. Доступно:? {balance})?`,
      // "Karta *1234; Zachislenie: 1500.00 RUR; Ostatok: 5000.00 RUR; 12.03.2024"
      r`Karta {card}; Zachislenie: {amount}(?:; Ostatok: {balance})?`,
      // "Zachislen perevod 25000 RUR na schet *5842. Balans 32605.51 RUR. Raiffeisenbank"
      r`Zachislena? (?:perevod|zarplata) {amount} na schet {account}(?:\. Balans {balance})?`,
      // "Schet *9561. Zachislen perevod 400.00 RUB.", "Schet *6470. Zachislena zarplata 56885.05 RUR. Balans …"
      r`Schet {account}\. Zachislena? (?:perevod|zarplata) {amount}(?:\. Balans {balance})?`,
      // "Balans vashey karty *4180 popolnilsya 2018-02-10 na 11700 RUR. Dostupny ostatok: 18476.28 RUR"
      r`(?:Balans vashey karty|баланс вашей карты) {card} (?:popolnilsya|пополнился) {date} (?:na|на):? {amount}\.(?: (?:Dostupny ostatok|доступный остаток): {balance})?`,
      // "Karta *7666. Zachisleno 1500.00 RUB. Balans 4204.73 RUB. 18.01.2020"
      r`Karta {card}\. Zachisleno {amount}(?:\. Balans {balance})?`,
    ],
    unless: [r`s deposita|с депозита|с вклада`],
    debit: [
      // "Karta *2665; Provedena operacija: 10605 RUR; RU/MOSCOW/RCONNECT C2C; …"
      r`Karta {card}; Provedena (?:operacija|tranzakcija): {amount}`,
      r`карта {card}; проведена транзакция: {amount}`,
    ],
  },
  {
    bank: 'raiffeisenbank',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.raiffeisen.mobile.new', 'Райффайзен Банк', 'Райффайзенбанк'],
    credit: [
      // "Пополнение счета *1234 на 3 000,00 RUB. Доступно 8 000,00 RUB"
      r`Пополнение сч[её]та {account} на {amount}(?:\. Доступно:? {balance})?`,
      // "Входящий перевод СБП 2 000 ₽ от Иван И."
      r`Входящий перевод СБП {amount}(?: от {name}{end})?`,
    ],
  },
  {
    bank: 'gazprombank',
    form: 'sms',
    currency: 'RUB',
    senders: ['Telecard', 'Telecart', 'GPB', 'Gazprombank', 'Газпромбанк'],
    credit: [
      // "Telecard; Card1234; Zachislenie; Summa: 1500.00 RUR; 12.03.24 10:05; Dostupno: 5000.00 RUR",
      // "Telecard; Card1745; Poluchen perevod; Summa 8000 RUR; … dostupno: 10099.38 RUR"
      r`Telecard; Card{card}; (?:Popolnenie|Zachislenie|Poluchen perevod)(?:; Uspeshno)?(?:; Summa)?:? {sum}(?:;.*? dostupno: {balance})?`,
      // "Telecard; Card5621;Card1691;CUP Standard; 10.01.18 12:52:12; Zachislenie; 21162.48 RUR; dostupno: …"
      r`Telecard; Card{card};.*? Zachislenie; {amount}(?:; dostupno: {balance})?`,
      // "Карта *1234 Зачисление 1 500.00 RUB Баланс 5 000.00 RUB"
      r`Карта {card} Зачисление {amount}(?: Баланс {balance})?`,
      // "*3164 Зачисление 26090р 30.08.18 09:26 Доступно 26090р", "*8641 Пополнение 4000р IPT GPB KAZAN 28.07.18 09:39:52",
      // "*7726 Получен перевод 0.1р PEREVOD MEZHDU KARTAMI …", "*5563 Внесение 35000р GAZPROMBANK …", "*3193 +1500р 07.03.18 …"
      r`^{card} (?:{time} )?(?:(?:Зачисление(?: зарплаты)?|Пополнение|Внесение|Получен перевод) )?(?=\+|\d){amount}(?:.*? Доступно {balance})?`,
    ],
  },
  {
    bank: 'gazprombank',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.gazprombank.android.mobilebank.app', 'Газпромбанк'],
    credit: [
      // "Поступил перевод по СБП 2 000 ₽ от Иван И."
      r`Поступил перевод(?: по СБП)? {amount}(?: от {name}{end})?`,
      // "Зачисление перевода 3 000 ₽ на счет *1234 от ПЕТР П. Доступно 9 000 ₽"
      r`Зачисление перевода {amount} на сч[её]т {account}(?: от {name}{end})?(?:\.? Доступно {balance})?`,
    ],
  },
  {
    bank: 'ozon',
    form: 'sms',
    currency: 'RUB',
    senders: ['Ozon Bank', 'OzonBank', 'Ozon Банк', 'OZON'],
    credit: [
      // "Ozon Банк: Пополнение на 2 000 ₽. Баланс 5 000 ₽"
      r`Пополнение(?: по СБП)? на {amount}(?:\. Баланс:? {balance})?$`,
      // "Зачисление +3 200,50 ₽ на карту *1234 от ИВАН И."
      r`(?:Зачисление|Поступление) {amount} на карту {card}(?: от {name}{end})?`,
    ],
  },
  {
    bank: 'ozon',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.ozon.app.android', 'ru.ozon.fintech.finance', 'Ozon Банк'],
    credit: [
      // "Входящий перевод +1 500 ₽ от Иван И. через СБП"
      r`Входящий перевод {amount}(?: от {name}{end})?`,
      // "Пополнение через СБП на 100 ₽. Антон Эдуардович Р. Альфа-Банк. Баланс 100 ₽",
      // "Пополнение на 1 000 ₽. Екатерина Леонидовна П.. Доступно 1 497 ₽"
      r`Пополнение(?: со своего сч[её]та)?(?: (?:по|через) СБП)? на {amount}(?:\. {person})?(?:.*? (?:Баланс|Доступно):? {balance})?`,
      // "Вам перевели 750 ₽ от Петр П."
      r`Вам перевели {amount}(?: от {name}{end})?`,
    ],
  },
  {
    bank: 'sovkom',
    form: 'sms',
    currency: 'RUB',
    senders: ['SOVCOMBANK', 'Sovcombank', 'Halva', 'Совкомбанк'],
    credit: [
      // "Зачисление 1500.00 RUB на карту *1234. Доступно 5000.00 RUB"
      r`(?:Зачисление|Пополнение) {amount} на карту {card}(?:\. Доступно:? {balance})?`,
      // "Karta *1234. Popolnenie 1500.00 RUB. Dostupno 5000.00 RUB"
      r`Karta {card}\. (?:Popolnenie|Zachislenie) {amount}(?:\. Dostupno {balance})?`,
      // "Совкомбанк: пополнение карты *1234 на 700 ₽. Доступно 1 700 ₽"
      r`пополнение карты {card} на {amount}(?:\. Доступно {balance})?`,
    ],
  },
  {
    bank: 'sovkom',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.sovcomcard.halva.v1', 'ru.ftc.faktura.sovkombank', 'Халва', 'Совкомбанк'],
    credit: [
      // "Поступление по СБП 2 000 ₽ от Иван И. Доступно 7 000 ₽"
      r`Поступление по СБП {amount}(?: от {name}{end})?(?:\.? Доступно {balance})?`,
      // "Входящий перевод 2 500 ₽ на карту *1234 от Иван И."
      r`Входящий перевод {amount} на карту {card}(?: от {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'mts',
    form: 'sms',
    currency: 'RUB',
    senders: ['MTS-Bank', 'MTSBank', 'MTS Bank', 'МТС-Банк', 'MTS_Bank'],
    credit: [
      // "Перевод на карту VP *4192; 19.01 19:19; VISA MONEY TRANSFER>Visa Direct RU; 1 425,00 RUB; Остаток: 1 604,74 RUB",
      // "Приход по счету карты VP *9707; 73,07 RUB; Остаток: 126,85 RUB", "Пополнение VP *4629; 25.01 16:32; …"
      r`(?:Перевод на карту|Perevod na kartu|Приход по сч[её]ту карты|Prihod po schetu karty|Пополнение|Popolnenie) (?:[A-Z]{2} )?{card};(?: {date} {time};)?(?: [^;]{1,60};)? {amount}(?:; (?:Остаток|Ostatok): {balance})?`,
      // The form MTS Bank sends today, with the card after the balance:
      // "Перевод на карту 5 000,00 RUB PEREVOD DR BANK Остаток: 5 122,50 RUB; *9131"
      r`Перевод на карту {amount}(?: [^;]{1,60}?)? (?:Остаток|Ostatok):? {balance}(?:; {card})?`,
    ],
  },
  {
    bank: 'mts',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.mtsbank.mobile', 'ru.mts.money', 'МТС Банк', 'МТС Деньги'],
    credit: [
      // "Поступление 5000р. Вадим Денисович Д через СБП."
      r`Поступление {amount}\.? {name} через СБП`,
      // "Перевод на карту *9131 5 000 ₽ от Ивана И. по СБП. Баланс 5 122,50 ₽"
      r`Перевод на карту {card} {amount}(?: от {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'pochta',
    form: 'sms',
    currency: 'RUB',
    senders: ['Pochta Bank', 'PochtaBank', 'Почта Банк'],
    credit: [
      // "Счёт договора 20770680 пополнен на 11000.00р. Баланс 11157.56р."
      r`Сч[её]т договора {account} пополнен на {amount}\.?(?: Баланс {balance})?`,
      // "Счёт договора 22806795. Пополнение на 3204.74р. Доступно 3228.53р", "Договор 44853115. Пополнение на …"
      r`(?:Сч[её]т договора|Договор) {account}\. Пополнение на {amount}\.?(?: Доступно {balance})?`,
      // "Карта 4*8274 23.03.18 17:22 Зачислено 30000.00 RUB VISA MONEY TRANSFER … Доступно 30660.28 RUB"
      r`Карта {card}\.? (?:{date} {time} )?(?:Зачислено|Пополнение на) {amount}${BALANCE}`,
      // "По карте 08.04.2018 08:27 пополнение счёта на сумму 500.00 руб."
      r`По карте {date} {time} пополнение сч[её]та на сумму {amount}`,
      // "Пополнение от Пенсионного Фонда РФ на 12018.87р. Доступно 12018.87р"
      r`Пополнение от {name} на {amount}(?:\.? Доступно {balance})?`,
      // "Почта Банк. Зачислено 1 500,00 руб. от ИВАНОВ И.И. Доступно 2 500,00 руб."
      r`Почта Банк\. Зачислено {amount} от {name}{end}${BALANCE}`,
      // "Операция выполнена 07.03.2018 10:11. Внесение наличных на счет в Почта Банке. Сумма 5000.00 руб."
      r`Внесение наличных на сч[её]т {words} Сумма {amount}`,
    ],
    unless: [r`на вклад|Сумма вклада`],
  },
  {
    bank: 'pochta',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.pochta.bank', 'ru.pochtabank.pochtaapp', 'Почта Банк'],
    credit: [
      // "Вам поступил перевод 5000 руб"
      r`Вам поступил перевод {amount}(?: от {name}{end})?${BALANCE}`,
      // "Пополнение по СБП +1 500 ₽ от Иван И. Карта *1234"
      r`Пополнение по СБП {amount} от {name}{end}(?:\.? Карта {card})?`,
    ],
  },
  {
    bank: 'rncb',
    form: 'sms',
    currency: 'RUB',
    senders: ['RNCB', 'RNKB', 'РНКБ'],
    credit: [
      // "Popolnenie, Karta:7999 summa:25580.18 RUR  balans:25.580,58 RUR  (vremya operatsii MSK …)"
      r`Popolnenie,? Karta:{card} summa:{sum} balans: ?{balance}`,
      // "Пополнение по договору:03411504614 сумма:20000.00 RUR."
      r`Пополнение по договору:{account} сумма:{sum}`,
      // "Пополнение, Карта:7999 сумма:1500.00 RUR баланс:3.580,58 RUR"
      r`Пополнение,? Карта:{card} сумма:{sum} баланс: ?{balance}`,
    ],
  },
  {
    bank: 'rncb',
    form: 'push',
    currency: 'RUB',
    senders: ['РНКБ', 'РНКБ Банк'],
    credit: [
      // "Зачислен перевод по СБП 1 500 ₽ от Иван И. Карта *1234. Баланс 3 580,58 ₽"
      r`Зачислен перевод по СБП {amount} от {name} Карта {card}${BALANCE}`,
    ],
  },
  {
    bank: 'home_bank',
    form: 'sms',
    currency: 'RUB',
    senders: ['HomeBank', 'Home Bank', 'HomeCredit', 'Хоум Банк'],
    credit: [
      // "Zachislenie: 1500.00 RUR. Karta *8349. 06.09.2018 12:49:17. Dostupno: 45459.57 RUR."
      r`(?:Zachislenie|Popolnenie): ?{sum}\. Karta {card}\.(?:.*? Dostupno: {balance})?`,
      // "Карта *1234 пополнение 1000р. Доступно 2 500 ₽"
      r`Карта {card} (?:пополнение|зачисление)(?: на)? {amount}${BALANCE}`,
    ],
  },
  {
    bank: 'home_bank',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.homecredit.smartbank', 'Хоум Банк', 'Home Bank'],
    credit: [
      // "Вам перевели 1 000 ₽ от Иван И."
      r`Вам перевели {amount}(?: от {name}{end})?${BALANCE}`,
      // "Поступление по СБП 1 000 ₽ на карту *1234 от Иван И."
      r`Поступление по СБП {amount} на карту {card}(?: от {name}{end})?`,
    ],
  },
  {
    bank: 'ros_bank',
    form: 'sms',
    currency: 'RUB',
    senders: ['ROSBANK', 'Rosbank', 'Росбанк'],
    credit: [
      // "Schet A*891: Popolnenie 9082.00 RUB; Dostupno: 10042.19 RUB; 19/01/18",
      // "Счет L*683: Пополнение 91357.38 RUB; Доступно: 91357.38 RUB; 10/04/19."
      r`(?:Schet|Сч[её]т) {account}: (?:Popolnenie|Пополнение) {amount}; (?:Dostupno|Доступно): {balance}`,
      // "Karta **0895: ATM … vnesena summa 22000.00 (RUR). Zachisleno 22000.00 (RUR). Ostatok: 23856.08"
      r`Karta {card}:.*? Zachisleno {sum} \((?:RUR|RUB)\)\.(?: Ostatok: {balance})?`,
    ],
    debit: [
      // "S karty **3548 perevedeno 20000.00 RUR.P2P ROSBANK. Spisano 20300.00 RUR."
      r`S karty {card} perevedeno {amount}`,
    ],
  },
  {
    bank: 'ros_bank',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.rosbank.android', 'Росбанк'],
    credit: [
      // "Поступление 1 500 ₽ на счёт *891 от Иван И. Доступно 10 042,19 ₽"
      r`Поступление {amount} на сч[её]т {account}(?: от {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'uralsib',
    form: 'sms',
    currency: 'RUB',
    senders: ['URALSIB', 'Uralsib', 'УралСиб'],
    credit: [
      // "Пополнение *2301 Сумма 3000.00 р Остаток 12663.20 р T-Bank Card2Ca"
      r`Пополнение {card} Сумма {sum} Остаток {balance}`,
      // "Уралсиб: Поступили средства 3 750,25 RUB на карту *4455. Остаток: 10 000 RUB"
      r`Поступили средства {amount} на карту {card}(?:\. Остаток:? {balance})?`,
    ],
  },
  {
    bank: 'uralsib',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.uralsib.mb', 'ru.uralsib.mobile', 'Уралсиб'],
    credit: [
      // "Входящий перевод по СБП 3 000 ₽ от Иван И. на карту *2301"
      r`Входящий перевод по СБП {amount} от {name} на карту {card}${BALANCE}`,
    ],
  },
  {
    bank: 'promsvyazn',
    form: 'sms',
    currency: 'RUB',
    senders: ['PSB', 'PSBank', 'Promsvyazbank', 'ПСБ'],
    credit: [
      // "Kontrakt *3338: Zachislenie 34 500.00 RUR;2018-01-19.Dostupno 35 041.50 RUR."
      r`Kontrakt {account}: Zachislenie {sum};.*?Dostupno {balance}`,
      // "Karta *2006: Zachislenie 5 000.00 RUR; 16/01, 17:44;PSBANK.RU.Dostupno 5 541.50 RUR."
      r`Karta {card}: (?:Zachislenie|Popolnenie|Postuplenie) {sum};.*?Dostupno {balance}`,
    ],
  },
  {
    bank: 'promsvyazn',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.psbank.mobile', 'ru.psbank', 'ПСБ'],
    credit: [
      // "*8454 Пополнение 1000p 1CUPIS.RU Доступно 1480,06p"
      r`{card} Пополнение {amount}(?:.*? Доступно {balance})?`,
      // "Зачисление по СБП 2 000 ₽ от Иван И. на карту *8454"
      r`Зачисление по СБП {amount} от {name} на карту {card}${BALANCE}`,
    ],
  },
  {
    bank: 'bank_open',
    form: 'sms',
    currency: 'RUB',
    senders: ['Otkritie', 'OTKRITIE', 'Открытие'],
    credit: [
      // "На карту *0988 зачислено 27 004.5 р. Доступно 27 004.5 р."
      r`На карту {card} зачислено {amount}(?:\.? Доступно {balance})?`,
      // "Вам перевели 14 199 р. на карту *3686. Доступно 50 660.71 р."
      r`Вам перевели {amount} на карту {card}(?:\.? Доступно {balance})?`,
      // "Карта 4460*2368 Зачислено 22.89 RUR Деньги станут доступны в течение часа"
      r`Карта {card} Зачислено {amount}`,
      // "Карта MC *1304 пополнена на 5348 р.. Доступно всего 5348,07 р.."
      r`Карта (?:MC |VISA |МИР )?{card} пополнена на {amount}\.*(?: Доступно(?: всего)? {balance})?`,
      // "Вы внесли 25 000 р. в банкомате DO 153 на карту *2368. Доступно 48 699.18 р."
      r`Вы внесли {amount} {any}на карту {card}\.(?: Доступно {balance})?`,
    ],
  },
  {
    bank: 'bank_open',
    form: 'push',
    currency: 'RUB',
    senders: ['com.openbank', 'Открытие'],
    credit: [
      // "Входящий перевод 1 500 ₽ от Иван И. Карта *3686"
      r`Входящий перевод {amount} от {name} Карта {card}${BALANCE}`,
    ],
  },
  {
    bank: 'mkb',
    form: 'sms',
    currency: 'RUB',
    senders: ['MKB', 'MKB Bank', 'МКБ'],
    credit: [
      // "MKB: 10.01.2018 18:20 5*3758 POPOLNENIE: 10 000.00 RUB TRM 11821. Balance: 244 255.10 RUB."
      r`MKB: {date} {time} {card} (?:POPOLNENIE|ZACHISLENIE|POSTUPLENIE): {amount}(?:.*? Balance: {balance})?`,
      // "Карта*1686 Пополнение 15660.00р Баланс 22624.28р"
      r`Карта ?{card} (?:Пополнение|Зачисление) {amount}(?: Баланс {balance})?`,
    ],
  },
  {
    bank: 'mkb',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.mkb.mobile', 'МКБ'],
    credit: [
      // "Поступление перевода 1 500 ₽ на карту *3758 от Иван И. Баланс 12 500 ₽"
      r`Поступление перевода(?: по СБП)? {amount} на карту {card}(?: от {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'rencredit',
    form: 'sms',
    currency: 'RUB',
    senders: ['Renaissance', 'RENCREDIT', 'Ренессанс'],
    credit: [
      // "Карта *1234: зачисление 1 500,00 RUB. Доступно 5 000,00 RUB"
      r`Карта {card}: (?:зачисление|пополнение) {amount}(?:\. Доступно:? {balance})?`,
    ],
  },
  {
    bank: 'rencredit',
    form: 'push',
    currency: 'RUB',
    senders: ['Ренессанс Банк', 'Ренессанс'],
    credit: [
      // "Поступил перевод 1 500 ₽ по СБП от Иван И."
      r`Поступил перевод {amount}(?: по СБП)?(?: от {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'bspb',
    form: 'sms',
    currency: 'RUB',
    senders: ['BankSPB', 'БСПБ', 'Bank SPB'],
    credit: [
      // "*0977 Зачислен перевод по СБП 12264RUB 16:54 от Владимир Олегович Л"
      r`{card} Зачислен перевод по СБП {amount} {time} от {name}{end}`,
      // "Банк Санкт-Петербург: зачислен перевод 1 200 р. от ИВАН И."
      r`зачислен перевод {amount} от {name}{end}`,
    ],
  },
  {
    bank: 'bspb',
    form: 'push',
    currency: 'RUB',
    senders: ['com.bssys.bspb', 'ru.bspb', 'БСПБ'],
    credit: [
      // "Зачислен перевод по СБП 3 500 ₽ от Иван И. на карту *1352"
      r`Зачислен перевод по СБП {amount} от {name} на карту {card}${BALANCE}`,
    ],
  },
  {
    bank: 'ak_bars_bank',
    form: 'sms',
    currency: 'RUB',
    senders: ['AkBars', 'AK BARS', 'AKBARS', 'Ак Барс'],
    credit: [
      // "Карта*9905 пополнение на 6027.00RUR.T-Bank Card2Card. 27.07.25 21:16. Остаток 11409.72RUR"
      r`Карта ?{card} пополнение на {amount}\.(?:.*? Остаток {balance})?`,
      // "Karta *3839. Popolnenie karty na summu 3500.00RUR. Perevod ot ДАВЫДОВА Р.Н. 2018-03-04 … Dostupno 3547.83RUR."
      r`Karta {card}\. Popolnenie karty na summu {sum}\.(?: Perevod ot {name}(?= \d))?(?:.*? Dostupno {balance})?`,
      // "Popolnenie scheta kontrakta *5351. ZACHISLENIE SOGLASNO VEDOMOSTI. Summa popolneniya 6000,00RUR. …"
      r`Popolnenie scheta kontrakta {account}\..*? Summa popolneniya {sum}\.(?:.*? Dostupno {balance})?`,
    ],
  },
  {
    bank: 'ak_bars_bank',
    form: 'push',
    currency: 'RUB',
    senders: ['ru.akbars.mobile', 'Ак Барс Онлайн'],
    credit: [
      // "Мария М. перевела вам 600 ₽"
      r`{person} перевела? вам {amount}`,
      // "Поступление 1 500 ₽ на карту *9905 от Иван И."
      r`Поступление {amount} на карту {card}(?: от {name}{end})?${BALANCE}`,
    ],
  },

  // ---------------------------------------------------------------- Kazakhstan
  {
    bank: 'kaspi',
    form: 'sms',
    currency: 'KZT',
    senders: ['Kaspi.kz', 'KaspiBank', 'Kaspi'],
    credit: [
      // "Пополнение: 8000т С Kaspi Депозита Доступно: 146 003,44т"
      r`Пополнение: {amount}(?:.*? Доступно: {balance})?`,
    ],
    // A Kaspi Deposit's own statement ("Kaspi Депозит D-007 … На Депозите: …") is not a card's
    // credit, nor is a top-up of a phone number paid from the card.
    unless: [r`На Депозите|На номер`],
  },
  {
    bank: 'kaspi',
    form: 'push',
    currency: 'KZT',
    senders: ['kz.kaspi.mobile', 'kz.kaspi.business', 'Kaspi.kz', 'Kaspi Pay'],
    credit: [
      // "Kaspi.kz | Поступление 1 000 ₸ от Иван И. Сообщение: …"
      r`Поступление {amount} от {name}{end}`,
      // Kaspi Pay: "Поступила оплата 1 990 ₸ от Имя Ф."
      r`Поступила оплата {amount}(?: от {name}{end})?`,
      // "Вам перевели 5 000 ₸ от Айгерим Н."
      r`Вам перевели {amount}(?: от {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'halyk_bank',
    form: 'sms',
    currency: 'KZT',
    senders: ['Halyk Bank', 'HalykBank', 'Halyk'],
    credit: [
      // "1192 Shotty tolyktyru/Popolnenie scheta. 14466.00 KZT; … Dostupnaya summa po karte: 28609.66 KZT",
      // "VISA6681 Esepke alu/Zachislenie. 13950.00 KZT; Popolnenie kartochnogo scheta …"
      r`(?:VISA|ECMC|MC)?{card} (?:Shotty tolyktyru/Popolnenie scheta|Esepke alu/Zachislenie)\. {amount};(?:.*?Dostupnaya summa po karte: {balance})?`,
      // "2018-10-02 04:51:01 Popolnenie 285000.00 KZT K**824 Dostupnaya summa:304994.98 KZT"
      r`Popolnenie {amount} {account}(?: Dostupnaya summa: ?{balance})?`,
    ],
  },
  {
    bank: 'halyk_bank',
    form: 'push',
    currency: 'KZT',
    // Halyk sends card operations as pushes of the Halyk app since June 2022 (halykbank.kz).
    senders: ['kz.halykbank.mobile', 'Halyk', 'Homebank'],
    credit: [
      // "Пополнение карты *1234 на 15 000,00 ₸. Отправитель: Айгерим Н. Доступно 40 000,00 ₸"
      r`Пополнение карты {card} на {amount}(?:\. Отправитель: {name}{end})?${BALANCE}`,
      // "Перевод 25 000 ₸ от Айгерим Н. на карту *1234"
      r`Перевод {amount} от {name} на карту {card}${BALANCE}`,
    ],
  },
  {
    bank: 'jusan_bank',
    form: 'sms',
    currency: 'KZT',
    senders: ['Jusan', 'JusanBank', 'Jusan Bank'],
    credit: [
      // "Пополнение карты *1234: 15 000,00 KZT. Доступно: 40 000,00 KZT"
      r`Пополнение карты {card}: {amount}(?:\. Отправитель: {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'jusan_bank',
    form: 'push',
    currency: 'KZT',
    senders: ['kz.jusan.mobile', 'Jusan'],
    credit: [
      // "Входящий перевод 25 000 ₸ от Айгерим Н."
      r`Входящий перевод {amount} от {name}{end}${BALANCE}`,
    ],
  },
  {
    bank: 'forte',
    form: 'sms',
    currency: 'KZT',
    accepts: ['KZT', 'RUB'],
    senders: ['ForteBank', 'Forte'],
    credit: [
      // "Postupilo 201073 KZT na schet #06334, ostatok 206 869.00 KZT. 20.03.2018 18:54."
      r`Postupilo {amount} na schet #?{account}(?:, ostatok {balance})?`,
      // "Vnesenie nalichnih 15 000.00 KZT adres ATM … karta ***9166, ostatok 503 390.99 KZT"
      r`Vnesenie nalichnih {amount} {any}karta {card}(?:, ostatok {balance})?`,
      // "06.01.2020 14:18. Na kartu ***9166 sdelan perevod 2 000.00 RUB s karti ***8335. Ostatok 488 390.99 KZT."
      r`Na kartu {card} sdelan perevod {amount} s karti(?:.*? Ostatok {balance})?`,
    ],
    footers: [r` ?Platite kartoi I poluchaite cashback do \d+ ?%\.?`],
  },
  {
    bank: 'forte',
    form: 'push',
    currency: 'KZT',
    senders: ['kz.fortebank.forte', 'ForteBank'],
    credit: [
      // "Поступление 15 000 ₸ на карту *9166 от Айгерим Н."
      r`Поступление {amount} на карту {card}(?: от {name}{end})?${BALANCE}`,
    ],
  },

  // ---------------------------------------------------------------- Tajikistan
  {
    bank: 'eskhata',
    form: 'sms',
    currency: 'TJS',
    accepts: ['TJS', 'RUB'],
    senders: ['Eskhata', 'ESKHATA', 'Bonki Eskhata'],
    credit: [
      // "VISA/**1234 08/10/2025 21:22 Приход: 61.61 TJS Eskhata Online Остаток: 1 250,18 TJS"
      r`(?:VISA|MC|UPI|NK|KM)?/?{card} {date} {time} Приход: {sum}(?:.*? Остаток: {balance})?`,
      // A transfer from Russia onto a rouble account: "Зачислен перевод из России 5 000,00 RUB на счет *1234"
      r`Зачислен перевод из России {amount} на сч[её]т {account}${BALANCE}`,
    ],
  },
  {
    bank: 'eskhata',
    form: 'push',
    currency: 'TJS',
    senders: ['tj.eskhata.online', 'Эсхата Онлайн', 'Eskhata Online'],
    credit: [
      // "Пополнение карты ****2462 Сумма: 112.00 TJS - УСПЕШНО Отправитель: КОДИРОВ Г. Дата: …"
      r`Пополнение карты {card} Сумма: {sum}(?: - УСПЕШНО)?(?: Отправитель: {name}(?= Дата|$))?`,
      // A wallet top-up paid in roubles: "Пополнения кошелька Сервис: ВТБ Банк Сумма RUB: 100.00 Сумма TJS: 11.74"
      r`Пополнени[ея] кошелька Сервис: {words} Сумма RUB: [\d.,]+ Сумма TJS: {sum}`,
    ],
  },
  {
    bank: 'alif_bank',
    form: 'sms',
    currency: 'TJS',
    accepts: ['TJS', 'RUB'],
    senders: ['alif', 'Alif Bank', 'alifmobi'],
    credit: [
      // "Пополнение кошелька на 250.00 смн. Отправитель: Сафаров Ф. Баланс: 1 250.00 смн."
      r`Пополнение кошелька на {amount}(?:\.? Отправитель: {name}{end})?${BALANCE}`,
      // "Карта *1234: поступление 5 000,00 RUB из России. Баланс: 12 000,00 RUB"
      r`Карта {card}: поступление {amount} из {words}${BALANCE}`,
    ],
  },
  {
    bank: 'alif_bank',
    form: 'push',
    currency: 'TJS',
    senders: ['tj.alif.mobi', 'alif mobi', 'Алиф'],
    credit: [
      // "Вы получили перевод 250 смн. от Сафаров Ф."
      r`Вы получили перевод {amount}(?: от {name}{end})?${BALANCE}`,
      // "Пополнения кошелька Сервис: Т-Банк Сумма RUB: 100 Сумма TJS: 11.66"
      r`Пополнени[ея] кошелька Сервис: {words} Сумма RUB: [\d.,]+ Сумма TJS: {sum}`,
    ],
  },
  {
    bank: 'arvand',
    form: 'sms',
    currency: 'TJS',
    senders: ['Arvand', 'Bonki Arvand', 'Арванд'],
    credit: [
      // "Карта *1234. Приход: 500.00 TJS. Остаток: 1 500.00 TJS"
      r`Карта {card}\. Приход: {sum}(?:\. Остаток: {balance})?`,
    ],
  },
  {
    bank: 'arvand',
    form: 'push',
    currency: 'TJS',
    senders: ['Арванд', 'Arvand Mobile'],
    credit: [
      // "Поступление средств 350.00 TJS на карту *1234 от Сафаров Ф."
      r`Поступление средств {amount}(?: на карту {card})?(?: от {name}{end})?${BALANCE}`,
    ],
  },
  {
    bank: 'vasl_bank',
    form: 'sms',
    currency: 'TJS',
    senders: ['Vasl', 'VaslBank'],
    credit: [
      // "Карта *1234 пополнена на 300.00 смн. Баланс: 1 300.00 смн."
      r`Карта {card} пополнена на {amount}${BALANCE}`,
    ],
  },
  {
    bank: 'vasl_bank',
    form: 'push',
    currency: 'TJS',
    senders: ['Vasl Pay', 'Vasl'],
    credit: [
      // "Перевод от Сбербанк на сумму 49.35 смн." (the payer's bank, not the payer); the app's
      // body alone without its title: "от MtcSbp на сумму 47.54 смн."
      r`^(?:Перевод )?от {words} на сумму {amount}`,
    ],
  },
];

/**
 * Common shapes tried after every bank's own forms, for a bank whose wording changed or an app
 * that rewords. A credit here needs an unmistakable credit phrase; the debit shape only names an
 * outgoing operation (it never credits anything).
 */
const GENERIC_FORMS: readonly BankForm[] = [
  {
    bank: 'unknown',
    form: 'any',
    currency: 'RUB',
    accepts: ['RUB', 'KZT', 'TJS'],
    senders: [],
    credit: [
      // "Перевод от Иван И. +1 500 ₽", "Поступление по СБП от ИВАН И. +1500 RUB"
      r`(?:Перевод|Поступление|Зачисление|Пополнение)(?: по СБП)? от {name} (?=\+){amount}${BALANCE}`,
      // "Вам перевели 1 500 ₽ от Ивана И.", "Иван И. перевел(а) вам 1500 RUB"
      r`(?:Вам перевели|перевела? вам|перевел\(а\) вам) {amount}(?: от {name}{end})?${BALANCE}`,
      // "Зачислено 1 500,00 руб. от ИВАНОВ И.И.", "Поступили средства 3 750,25 RUB на карту *4455"
      r`(?:Зачислен|Поступ|Пополнен|Входящий перевод){gap}{amount}(?: от {name}{end})?${BALANCE}`,
    ],
    // Without a bank's exact format, a text that also speaks of a debit is not trusted: a phone
    // or savings top-up ("Пополнение вклада 10 000 ₽ со счёта") is money leaving the card.
    unless: [r`списан|покупк|оплат|телефон|на номер|вклад|накопительн|копилк|депозит|deposit|vklad|займ|kredita|кредита|корректировк`],
    debit: [
      // A signed amount: "*1691 -3900р Комиссия 19.5р …", "Karta *0017.Spisanie: -10.00 RUB"
      r`(?:^|[\s;:.])(?=[-−] ?\d){amount}`,
      r`(?<![а-яёa-z])(?:покупка|оплата|списание|списано|снятие|выдача|получение наличных|платеж|платёж|комиссия|погашение|перевод(?! от| из)|переведено|вы заплатили|вы сняли|вы перевели|заплатили|pokupka|oplata|spisanie|spisano|spisan|snyatie|snjatie|vydacha|perevod|platezh|komissiya|predauth|nalichnie|umenshen balans|расход|rashod)(?![а-яёa-z]){any}{amount}`,
    ],
  },
];

/**
 * Texts never read at all, whatever else they say: one-time codes (which often repeat the
 * transfer being confirmed, "Перевод 1 500р … Код: 12345"), declines and cancellations, refunds,
 * cashback, interest and bonus credits, adverts ("Пополнение на 1 000 ₽ — кешбэк 5%").
 */
const REFUSE: readonly string[] = [
  r`никому не (?:сообщайте|говорите|называйте|передавайте|показывайте)|nikomu ne (?:soobshchaite|soobshaite|govorite)`,
  r`(?<![а-яё])код(?![а-яё])(?! (?:операции|транзакции|авторизации))|(?<![a-z])(?:kod|code)(?![a-z])|парол|parol`,
  r`(?<![а-яё])(?:отказ|отклон[её]н|недостаточно средств|не выполнен|не зачислен|отмен[её]н|отмена)|(?<![a-z])(?:otkaz|otmena|otklonen)`,
  r`возврат|vozvrat`,
  // A correction of an earlier credit is neither money in nor a payment out.
  r`корректировк|korrektirovk`,
  r`кешб[эе]к|кэшб[эе]к|cashback|бонус|(?<![a-z])bonus|(?<![а-яё])акци[яи]|получите|розыгрыш|\d ?%`,
  r`процент|protsent|procent`,
];

/** Names an executor's app may send instead of the directory code. */
const ALIASES: Readonly<Record<string, string>> = {
  sber: 'sberbank',
  tbank: 'tinkoff',
  't-bank': 'tinkoff',
  'т-банк': 'tinkoff',
  alfa: 'alfabank',
  'alfa-bank': 'alfabank',
  raiffeisen: 'raiffeisenbank',
  sovcombank: 'sovkom',
  halva: 'sovkom',
  mtsbank: 'mts',
  'mts-bank': 'mts',
  ozonbank: 'ozon',
  psb: 'promsvyazn',
  psbank: 'promsvyazn',
  otkritie: 'bank_open',
  open: 'bank_open',
  homecredit: 'home_bank',
  home_credit: 'home_bank',
  rosbank: 'ros_bank',
  akbars: 'ak_bars_bank',
  renaissance: 'rencredit',
  halyk: 'halyk_bank',
  jusan: 'jusan_bank',
  fortebank: 'forte',
  alif: 'alif_bank',
  vasl: 'vasl_bank',
};

/** The whole table, as the engine takes it. */
export const PARSER_TABLE: ParserTable = { forms: BANK_FORMS, generic: GENERIC_FORMS, refuse: REFUSE, aliases: ALIASES };
