import { type Currency, moneyGroup, readMoney } from './amount.js';
import { recipientMask } from './masks.js';

/**
 * Reads an incoming transfer from any wording, with or without a known form: a credit word
 * (Russian or transliterated: "Зачислено", "Поступление", "Пополнение", "Внесение", "Приход",
 * "Получен перевод", "… перевел(а) вам", "Перевод из <bank>", "Zachislen perevod", "Postuplenie",
 * "Popolnenie", "Cash-in", a "+" before the amount), then the first amount after it before any
 * balance word, the recipient's digits wherever they stand (masks.ts), and the balance after a
 * balance word. A text that speaks of money leaving, of deposits, savings, loans or interest, or
 * of a currency Kassir does not receive, is never read here: when in doubt it waits for a person.
 */

/** Words of money received; each is read only when the text has no debit word. */
const CREDIT = new RegExp(
  [
    '(?<![а-яёa-z])(?:',
    [
      'зачисл[а-яё]*',
      'поступ[а-яё]*',
      'пополн[а-яё]*',
      'внесен[а-яё]*',
      'внесли',
      'приход',
      'получен[а-яё]* перевод',
      'перевел(?:\\(а\\)|а)? вам',
      'вам перевели',
      'входящ[а-яё]* перевод',
      'зарплата',
      'перевод(?: по СБП)? (?:из|от)',
      // "Перевод 545.00р от АЛЕКСЕЙ Л." (without "от" it is money sent)
      'перевод(?= \\+?\\d[\\d ]*(?:[.,]\\d{1,2})? ?(?:р|₽|руб|RUB|RUR)\\.? от )',
      'zachisl[a-z]*',
      'postup[a-z]*',
      'popoln[a-z]*',
      'vnesen[a-z]*',
      'prihod',
      'poluchen perevod',
      'cash-in',
      'perevod(?: SBP)? ot',
    ].join('|'),
    ')(?![а-яёa-z])',
    // A "+" right before a marked amount: "*3193 +1500р 07.03.18 Доступно 10369.58р"
    `|(?<![\\d.,])(?=\\+ ?\\d[\\d ]*(?:[.,]\\d{1,2})? ?(?:р|₽|руб|RUB|RUR|KZT|₸|т|TJS|смн)(?![а-яёa-z]))`,
  ].join(''),
  'gi',
);

/** Money leaving, or money that is not a payer's transfer (own deposit or savings, a loan, interest). */
const NOT_A_TRANSFER = new RegExp(
  [
    '(?<![а-яёa-z])(?:',
    [
      'списан[а-яё]*',
      'spisan[a-z]*',
      'spisano',
      'покупк[а-яё]*',
      'pokupk[a-z]*',
      'оплат[а-яё]*',
      'oplat[a-z]*',
      'снят[а-яё]*',
      'snyat[a-z]*',
      'snjat[a-z]*',
      'выдач[а-яё]*',
      'vydach[a-z]*',
      'плат[её]ж[а-яё]*',
      'platezh[a-z]*',
      'комисси[а-яё]*',
      'komiss[a-z]*',
      'погашен[а-яё]*',
      'pogash[a-z]*',
      'предавториз[а-яё]*',
      'predauth',
      'вы перевели',
      'вы заплатили',
      'перевод с карты',
      'перевод со сч[её]та',
      'perevod s kart[a-z]*',
      'perevod so scheta',
      'отправлен[а-яё]*',
      'otpravlen[a-z]*',
      'исполнен[а-яё]*',
      'perevedeno',
      'переведено',
      'расход[а-яё]*',
      'rashod[a-z]*',
      'debit',
      'debet',
      'вклад[а-яё]*',
      'vklad[a-z]*',
      'депозит[а-яё]*',
      'deposit[a-z]*',
      'копилк[а-яё]*',
      'займ[а-яё]*',
      'zaym[a-z]*',
      'zaim[a-z]*',
      'заем',
      'kredita',
      'кредита',
      'процент[а-яё]*',
      // A phone's top-up paid from the card, a correction of an earlier credit.
      'на номер',
      'na nomer',
      'телефон[а-яё]*',
      'корректировк[а-яё]*',
    ].join('|'),
    ')(?![а-яёa-z])',
  ].join(''),
  'i',
);

/** Currencies a bank may write that Kassir never receives: such a text is not read at all. */
const FOREIGN = /\d ?(?:BYN|UAH|USD|EUR|KGS|UZS|AZN|GBP|CNY)(?![a-z])/i;

const BALANCE_WORD = '(?<![а-яёa-z])(?:баланс|доступно|остаток|лимит|balans|dostupno|ostatok|limit|balance)(?![а-яёa-z])';

/** After a credit word: a balance word (the amount was not there), a labelled sum, or a marked amount. */
const AMOUNT_AFTER = new RegExp(
  `(?<stop>${BALANCE_WORD})|(?:summa|сумма|сумму|summu)[: ]*${moneyGroup('labelled', { markOptional: true })}|${moneyGroup('amount')}`,
  'gi',
);

const BALANCE_AFTER = new RegExp(`${BALANCE_WORD}(?: всего| po karte| summa)?:? ?${moneyGroup('balance', { markOptional: true, signed: true })}`, 'i');

/** "-1 500 ₽" seen from its "500 ₽": a minus before the amount, or a 1-3 digit group before 3 digits. */
function fragment(text: string, index: number, match: string): boolean {
  const before = text.slice(Math.max(0, index - 8), index);
  return /[-−] ?$/.test(before) || (/(?:^|[^\d*•.,])\d{1,3} $/.test(before) && /^\d{3}(?!\d)/.test(match));
}

export interface UniversalRead {
  amount: string;
  currency: Currency;
  digits?: string;
  digitsKind?: 'card' | 'account' | 'phone';
  balance?: string;
}

/**
 * The incoming transfer in `text` (one line, as the engine folds it), or undefined. `currency` is
 * the hinted bank's (for an amount written without a mark; undefined: such an amount is not read),
 * `accepts` the currencies that bank receives.
 */
export function readUniversal(text: string, currency: Currency | undefined, accepts: readonly Currency[]): UniversalRead | undefined {
  if (NOT_A_TRANSFER.test(text) || FOREIGN.test(text)) return undefined;
  const plain = text.replace(/\((RUR|RUB|KZT|TJS)\)/gi, '$1');
  for (const credit of plain.matchAll(CREDIT)) {
    const from = credit.index + credit[0].length;
    AMOUNT_AFTER.lastIndex = from;
    let money: ReturnType<typeof readMoney>;
    let end = from;
    // The first amount within reach of the credit word, unless a balance word comes first.
    for (let found = AMOUNT_AFTER.exec(plain); found && found.index - from <= 90; found = AMOUNT_AFTER.exec(plain)) {
      // A balance word first, or the tail of a number ("-1 500 ₽" read from its "500 ₽"): no amount here.
      if (found.groups?.stop || fragment(plain, found.index, found[0])) break;
      const raw = found.groups?.labelled ?? found.groups?.amount;
      money = raw === undefined ? undefined : readMoney(raw);
      if (money) {
        end = found.index + found[0].length;
        break;
      }
    }
    if (!money || money.negative) continue;
    const read = money.currency ?? currency;
    if (!read || !accepts.includes(read)) continue;
    const result: UniversalRead = { amount: money.amount, currency: read };
    const mask = recipientMask(text);
    if (mask) {
      result.digits = mask.digits;
      result.digitsKind = mask.kind;
    }
    const balance = BALANCE_AFTER.exec(plain.slice(end));
    const balanceMoney = balance?.groups?.balance === undefined ? undefined : readMoney(balance.groups.balance);
    if (balanceMoney && !balanceMoney.negative && (balanceMoney.currency ?? read) === read) result.balance = balanceMoney.amount;
    return result;
  }
  return undefined;
}

/**
 * Where a bank names its own reference for the transfer: "Номер операции 123456", "Код операции:
 * 105016158", "СБП ID A41231234567890000000011700301", "ID операции в СБП: B5…", "Квитанция №
 * 1-2-345-678". A reference names one transfer, so the same one reported for two payments is the
 * evidence check's "reference reused" (issue 36 item 4).
 */
const REFERENCE = new RegExp(
  [
    '(?<![а-яёa-z])(?:',
    [
      '(?:номер|№|код|id|идентификатор|nomer|kod) ?(?:операции|транзакции|перевода|платежа|документа|operacii|operatsii|tranzakcii|perevoda)(?: (?:в |по )?(?:СБП|SBP))?',
      '(?:СБП|SBP) ?(?:ID|№)',
      'ID (?:СБП|SBP)',
      '(?:operation|transaction|transfer) (?:id|no|number)',
      'квитанци[яи] ?№',
      'номер квитанции',
    ].join('|'),
    ')[:.#№ ]{0,3}(?<reference>[A-Za-z0-9](?:[A-Za-z0-9-]{3,48})[A-Za-z0-9])(?![A-Za-z0-9])',
  ].join(''),
  'i',
);

/**
 * The bank's reference for the transfer in `text` (as the engine folds it), upper-cased without
 * its hyphens, or undefined: at least 5 characters of which at least 4 are digits, so that a word
 * after the label is never taken for one.
 */
export function readReference(text: string): string | undefined {
  const raw = REFERENCE.exec(text)?.groups?.reference;
  if (!raw) return undefined;
  const reference = raw.replace(/-/g, '').toUpperCase();
  return reference.length >= 5 && (reference.match(/\d/g) ?? []).length >= 4 ? reference : undefined;
}

/** Words that follow a payer's name in the messages we know: never a part of it. */
const AFTER_NAME = /^(?:баланс|доступно|остаток|дата|сумма|карта|сч[её]т|сообщение|комиссия|код|по|через|balans|dostupno|ostatok|summa)$/i;
const NAME_WORD = '\\p{Lu}[\\p{L}-]*';

/** "Отправитель: ИВАН ИВАНОВИЧ И.", "Sender: Ivan I.": a labelled payer (its words capitalised). */
const LABELLED_PAYER = new RegExp(
  `(?<![\\p{L}])(?:[Оо]тправитель|ОТПРАВИТЕЛЬ|[Пп]лательщик|ПЛАТЕЛЬЩИК|[Оо]т кого|[Oo]tpravitel|[Ss]ender)[: ]+(?<name>${NAME_WORD}(?: ${NAME_WORD}){0,3}\\.?)`,
  'u',
);
/** "… от Иван И.": an unlabelled payer, read only when it ends in a surname's initial. */
const PAYER_FROM = new RegExp(`(?<![\\p{L}])(?:от|ot) (?<name>${NAME_WORD}(?: ${NAME_WORD}){0,2} \\p{Lu}\\.)`, 'u');

/**
 * The payer's name in `text` (as the engine folds it) when the bank names one: labelled
 * ("Отправитель: …") or after "от" ending in an initial ("от Иван И."); undefined otherwise. For
 * the evidence check only: a form of banks.ts that reads the payer (`sender`) is preferred.
 */
export function readPayerName(text: string): string | undefined {
  const raw = (LABELLED_PAYER.exec(text) ?? PAYER_FROM.exec(text))?.groups?.name;
  if (!raw) return undefined;
  // The words up to the first that is the message going on ("… Н. Доступно 40 000 ₸").
  const words: string[] = [];
  for (const word of raw.trim().split(' ')) {
    if (AFTER_NAME.test(word.replace(/\.$/, ''))) break;
    words.push(word);
  }
  const name = words.join(' ');
  return name.replace(/\.$/, '').length >= 2 ? name : undefined;
}
