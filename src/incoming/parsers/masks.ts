/**
 * The requisite's digits wherever a bank message shows them, in every shape Russian, Kazakh and
 * Tajik banks print a card, an account or a phone: "*1234", "**** 1234", "•• 1234", "4*8274",
 * "440563**0769", "2200-XXXX-XXXX-3474", "МИР-1234", "MIR1234", "МИР Сберкарта8105",
 * "Visa Classic9410", "Card1234", "Karta:7999", "карта ****1234", "СЧЁТ1234", "ПЛАТ.СЧЕТ*1389",
 * "Счет 0239", "сч*0707", "A*891", "K**041", "#06334", "Договор 44853115", "+7 *** ***-12-34".
 *
 * A mask the text gives as the payer's ("с карты *1234", "s karti ***8335", "со счета 4081**4363",
 * "от … tel +7…") is never the recipient's.
 */

export type DigitsKind = 'card' | 'account' | 'phone';

export interface Mask {
  /** What a requisite's value must end with: a card's last 4, an account's or a phone's visible tail. */
  digits: string;
  kind: DigitsKind;
  /** Where the mask stands in the text. */
  index: number;
  end: number;
}

const LETTER = 'A-Za-zА-Яа-яЁё';

/** Words that make the digits after them an account's. */
const ACCOUNT_WORD = /(?:сч[её]т|сч\.?|счета|счету|schet|scheta|schetu|договор\w*|dogovor\w*|kontrakt|контракт\w*|account|#)\s*[:№.-]?\s*$/i;

/** Card products and payment systems written before a card's last digits. */
const CARD_LABEL = ['MIR', 'МИР', 'VISA', 'ECMC', 'MAES', 'MC', 'ORPS', 'UPI', 'Card', 'Karta', 'Карта', 'карты', 'карту', 'kartu', 'karty', 'karti'].join('|');
const CARD_PRODUCT = '(?:[ -]?(?:Сберкарта|СберКарта|Classic|Gold|Platinum|Momentum|Моментальная|Signature|Infinite|Standard|Electron|Debit|Credit|Pay))*';
const ACCOUNT_LABEL = 'ПЛАТ\\.СЧ[ЕЁ]Т|Сбер\\.сч[её]т|СЧ[ЕЁ]Т|Сч[её]т|Schet|сч|Договор|договору|договора|Kontrakt|Контракт';

/** A masked number: "*1234", "4*8274", "440563**0769", "•• 1234", "A*891", "2200-XXXX-XXXX-3474". */
const MASKED = new RegExp(
  [
    `(?<![\\d${LETTER}])\\d{4}(?:[ -]?[xXхХ*•]{4}){2}[ -]?\\d{4}(?!\\d)`,
    `(?<![\\d*•])(?:(?<![${LETTER}])[A-ZА-Я](?=[*•])|(?<![${LETTER}])\\d{1,6}(?=[*•]))?[*•]{1,12} ?\\d{2,20}(?!\\d)`,
  ].join('|'),
  'g',
);

/** A labelled number without a mask: "МИР8105", "MIR-1234", "Card9047", "Karta:7999", "СЧЁТ0000", "Счет 0239", "#06334". */
const LABELLED = new RegExp(
  `(?<![${LETTER}])(?:(?<card>${CARD_LABEL})${CARD_PRODUCT}|(?<account>${ACCOUNT_LABEL}))[ :№#.-]{0,2}(?<digits>\\d{4,20})(?![\\d.,]\\d)(?!\\d)|(?<hash>#)(?<hashed>\\d{4,20})(?!\\d)`,
  'gi',
);

/** A masked phone: "+7 *** ***-12-34", "+7 (9**) ***-12-34", "+7******1234". */
const PHONE = /\+7[ (]*[\d*•xX]{3}[ )-]*[\d*•xX]{3}[ -]*[\d*•xX]{2}[ -]*\d{2}(?!\d)/g;

/** The text right before a payer's mask. */
const PAYER_BEFORE =
  /(?:(?:^|[\s.,;:])(?:с|со|из|s|so|iz|from|отправител\w*|otpravitel\w*)\s+(?:карты|карта|karty|karti|kartu|счета|сч[её]та|scheta|сч\.?|вклада|vklada)?\s*[№N:]?\s*|(?:tel|тел)\.?:?\s*)$/i;

function tail(raw: string, kind: DigitsKind): string {
  const parts = raw.split(/[*•xXхХ]+/);
  const visible = parts[parts.length - 1]!.replace(/\D/g, '');
  return kind === 'card' ? visible.slice(-4) : visible;
}

/** Every card, account and phone mask in the text, in order, the payer's left out. */
export function findMasks(text: string): Mask[] {
  const found: Mask[] = [];
  const taken = (index: number, end: number) => found.some((m) => index < m.end && end > m.index);
  const payers: { index: number; end: number }[] = [];
  const add = (index: number, end: number, raw: string, kind: DigitsKind) => {
    if (taken(index, end)) return;
    const before = text.slice(Math.max(0, index - 30), index);
    if (PAYER_BEFORE.test(before)) {
      payers.push({ index, end });
      return;
    }
    const digits = tail(raw, kind);
    if (digits.length >= 2) found.push({ digits, kind, index, end });
  };
  for (const m of text.matchAll(PHONE)) {
    if (/[*•xX]/.test(m[0])) add(m.index, m.index + m[0].length, m[0], 'phone');
  }
  for (const m of text.matchAll(LABELLED)) {
    const g = m.groups!;
    const digits = g.digits ?? g.hashed!;
    const start = m.index + m[0].length - digits.length;
    // "Карта 4460*2368": the masked form below reads the whole number.
    if (/^[ -]?[*•xXхХ]/.test(text.slice(start + digits.length))) continue;
    add(start, start + digits.length, digits, g.card ? 'card' : 'account');
  }
  for (const m of text.matchAll(MASKED)) {
    const before = text.slice(Math.max(0, m.index - 30), m.index);
    const kind: DigitsKind = /^\d{4}[ -]?[xXхХ*•]{4}/.test(m[0])
      ? 'card'
      : ACCOUNT_WORD.test(before) || /^(?:[A-ZА-Я]|40[5-8]|42[0-6])/.test(m[0])
        ? 'account'
        : 'card';
    add(m.index, m.index + m[0].length, m[0], kind);
  }
  return found.filter((m) => !payers.some((p) => m.index < p.end && m.end > p.index)).sort((a, b) => a.index - b.index);
}

/** The recipient's mask: the first one the text shows that is not the payer's. */
export function recipientMask(text: string): Mask | undefined {
  return findMasks(text)[0];
}
