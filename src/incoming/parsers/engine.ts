import { CURRENCIES, type Currency, moneyGroup, readMoney } from './amount.js';
import { recipientMask } from './masks.js';
import { readUniversal } from './universal.js';

/**
 * The one matching engine behind every bank's notification formats. It knows nothing about any
 * bank: banks.ts describes each bank's message forms as data (senders, currency, patterns written
 * in the small template language below) and this module compiles and applies them.
 *
 * Template language. A pattern is a regular expression (case-insensitive, matched anywhere in
 * the text, which has been folded to one line with single spaces) in which these placeholders
 * stand for the parts the engine reads:
 *
 *   {amount}   the amount, with its currency mark ("+1 500 ₽", "14466.00 KZT", "49.35 смн.")
 *   {sum}      the amount, currency mark optional: without one it is in the form's currency
 *   {balance}  the balance after the operation (mark optional); reported, never the amount
 *   {card}     the recipient's card, as shown ("*1234", "4*8274", "•• 1234", "1234"): last 4 digits
 *   {account}  the recipient's account ("*3338", "A*891", "20770680"): digits after the mask
 *   {phone}    the recipient's phone ("+7 *** ***-45-67"): digits after the mask
 *   {person}   the payer's name ending in an initial ("Иван И.", "МАРИНА АЛЕКСАНДРОВНА Д.")
 *   {name}     the payer's name as free words (no digits); ends where the pattern goes on
 *   {end}      where a free name ends in the notifications we know (before "по СБП", "Баланс"…)
 *   {time} {date}  a time ("12:34", "12:34:56") and a date ("12.03", "12.03.24", "2018-01-19")
 *   {words}    up to 60 characters without digits or "+" (a merchant, a bank's name)
 *   {any}      up to 80 characters of anything (lazy)
 *   {gap}      up to 40 characters without a balance word nor a number other than a "*1234"
 *
 * Each of amount/sum, balance, card/account/phone and person/name appears at most once.
 */

export type Form = 'sms' | 'push';
type DigitsKind = 'card' | 'account' | 'phone';
export type Direction = 'incoming' | 'outgoing';

/** One bank's messages of one form, as banks.ts lists them. */
export interface BankForm {
  /** Directory code (banks.code): sberbank, tinkoff, kaspi, eskhata… */
  bank: string;
  /** SMS, or a push notification of the bank's app; `any` for the generic shapes. */
  form: Form | 'any';
  /** SMS sender ids ("900", "Tinkoff"), or app package names and notification titles. */
  senders: readonly string[];
  /** The currency of amounts the bank writes without a mark. */
  currency: Currency;
  /**
   * Currencies this form reads at all (default: `currency` only), so that a tenge pattern never
   * reads a rouble text; a Tajik bank that reports rouble transfers lists both.
   */
  accepts?: readonly Currency[];
  /** Incoming money: a payer's transfer or a top-up of the requisite. */
  credit: readonly string[];
  /** Money leaving the requisite (purchases, payments, transfers out, fees, withdrawals). */
  debit?: readonly string[];
  /** A text matching one of these is never read as a credit of this form (savings, deposits…). */
  unless?: readonly string[];
  /** Advert or link footers the bank appends; removed from every text before reading. */
  footers?: readonly string[];
}

/** Everything the engine applies: bank forms in order, generic shapes, global refusals, aliases. */
export interface ParserTable {
  forms: readonly BankForm[];
  /** Tried after every bank's forms; their result carries the hinted bank or "unknown". */
  generic: readonly BankForm[];
  /** Texts that are never read at all, whatever else they say (codes, declines, adverts). */
  refuse: readonly string[];
  /** Names an executor's app may send instead of the directory code. */
  aliases: Readonly<Record<string, string>>;
}

/** What a notification says happened. */
export interface ParsedCredit {
  direction: Direction;
  /** The operation's amount, two decimals ("1500.00"); never the balance nor a fee. */
  amount: string;
  currency: Currency;
  /** Bank whose format matched (the hinted bank or "unknown" for the generic shapes). */
  bank: string;
  /** The form that matched; absent for the generic shapes. */
  form?: Form;
  /** The requisite's digits as the text shows them (last 4 of a card, an account's, a phone's). */
  digits?: string;
  digitsKind?: DigitsKind;
  /** The payer's name as the bank shows it ("ИВАН И."), when the text has one. */
  sender?: string;
  /** The balance after the operation, in the amount's currency, when the text has one. */
  balance?: string;
}

/** What the caller knows about where a text came from. */
export interface ParseHint {
  /** The requisite's bank code (or a common spelling of it: "T-Bank", "Sber"). */
  bank?: string;
  /** The SMS sender id ("900", "MTS-Bank") or the app package / notification title. */
  sender?: string;
}

const MASK = /[*•xX]/;

/** Where a free-words payer's name ends in the notifications we know. */
const NAME_END = '(?= ?[«"“„]|,? (?:по|через) СБП|\\.? (?:Баланс|Доступно|Остаток|Сообщение|Сч[её]т|Карта|Balans|Dostupno|Ostatok)|[.,]?$)';

/** Placeholders that capture: the group each one fills. */
const CAPTURING: Record<string, (direction: Direction) => string> = {
  amount: (d) => moneyGroup('amount', { signed: d === 'outgoing' }),
  sum: (d) => moneyGroup('amount', { markOptional: true, signed: d === 'outgoing' }),
  balance: () => moneyGroup('balance', { markOptional: true, signed: true }),
  card: () => '(?<![\\d*•])(?<card>(?:\\d{0,6}[*•xX]{1,12} ?)?\\d{4})(?!\\d)',
  account: () => '(?<![\\d*•])(?<account>(?:[A-Za-zА-Яа-я]?\\d{0,6}[*•xX]{1,12} ?)?\\d{3,20})(?!\\d)',
  phone: () => '(?<phone>\\+?\\d[\\d *•xX()-]{4,18}\\d)(?!\\d)',
  person: () => '(?<sender>(?:[^\\d\\s+*;|.,:«»"]+ ){1,3}[^\\d\\s+*;|.,:«»"]\\.(?:[^\\d\\s+*;|.,:«»"]\\.)?)',
  name: () => '(?<sender>[^\\d+*;|]+?)',
};

const PLAIN: Record<string, string> = {
  end: NAME_END,
  time: '\\d{1,2}:\\d{2}(?::\\d{2})?',
  date: '\\d{1,4}[./-]\\d{1,2}(?:[./-]\\d{2,4})?',
  words: '[^\\d+]{1,60}?',
  any: '.{0,80}?',
  gap: '(?:(?!баланс|доступно|остаток|balans|dostupno|ostatok)(?:\\*\\d{4}|[^\\d+])){0,40}?',
};

/** Placeholders that fill the same group (at most one of them per pattern). */
const GROUP_OF: Record<string, string> = {
  amount: 'amount',
  sum: 'amount',
  balance: 'balance',
  card: 'digits',
  account: 'digits',
  phone: 'digits',
  person: 'sender',
  name: 'sender',
};

/** Compiles one template; throws on an unknown placeholder, a repeated group or no amount. */
export function compilePattern(template: string, direction: Direction): RegExp {
  const seen = new Set<string>();
  const source = template.replace(/\{([a-z]+)\}/g, (_, name: string) => {
    const capturing = CAPTURING[name];
    if (capturing) {
      const group = GROUP_OF[name]!;
      if (seen.has(group)) throw new Error(`"${template}": {${name}} repeats the ${group}`);
      seen.add(group);
      return capturing(direction);
    }
    const plain = PLAIN[name];
    if (plain === undefined) throw new Error(`"${template}": unknown placeholder {${name}}`);
    return plain;
  });
  if (!seen.has('amount')) throw new Error(`"${template}": a pattern names {amount} or {sum}`);
  return new RegExp(source, 'id');
}

interface CompiledForm {
  form: BankForm;
  credit: RegExp[];
  debit: RegExp[];
  unless: RegExp[];
}

/** A parser table ready to read texts. */
export interface CompiledTable {
  forms: CompiledForm[];
  generic: CompiledForm[];
  refuse: RegExp[];
  footers: RegExp[];
  aliases: Readonly<Record<string, string>>;
  /** Lower-cased sender → the forms that use it. */
  senders: Map<string, CompiledForm[]>;
}

function compileForm(form: BankForm): CompiledForm {
  return {
    form,
    credit: form.credit.map((t) => compilePattern(t, 'incoming')),
    debit: (form.debit ?? []).map((t) => compilePattern(t, 'outgoing')),
    unless: (form.unless ?? []).map((t) => new RegExp(t, 'i')),
  };
}

/** Compiles every pattern of `table` once; throws naming the first bad pattern. */
export function compileTable(table: ParserTable): CompiledTable {
  const forms = table.forms.map(compileForm);
  const senders = new Map<string, CompiledForm[]>();
  for (const compiled of forms) {
    for (const sender of compiled.form.senders) {
      const key = sender.trim().toLowerCase();
      senders.set(key, [...(senders.get(key) ?? []), compiled]);
    }
  }
  return {
    forms,
    generic: table.generic.map(compileForm),
    refuse: table.refuse.map((t) => new RegExp(t, 'i')),
    footers: [...table.forms, ...table.generic].flatMap((f) => f.footers ?? []).map((t) => new RegExp(t, 'gi')),
    aliases: table.aliases,
    senders,
  };
}

/** A bank notification is a few hundred characters; longer text is not one. */
const MAX_LENGTH = 1000;

/** Cyrillic letters that look Latin, as some banks type them inside Latin words ("Рostupleniyе"). */
const LOOKALIKES: Record<string, string> = {
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
};

/** One line, ordinary spaces and a plain hyphen-minus, Latin words in Latin letters, as the patterns expect. */
export function normalize(text: string): string {
  return (
    text
      // "P2P" is a kind of transfer, not 2 roubles
      .replace(/(?<![A-Za-z])P2P(?![A-Za-z])/gi, 'P-to-P')
      .replace(/[A-Za-zА-Яа-яЁё]+/g, (word) =>
        /[A-Za-z]/.test(word) && /[А-Яа-яЁё]/.test(word) && !/[^АВЕКМНОРСТХаеорсухA-Za-z]/.test(word)
          ? word.replace(/[А-Яа-я]/g, (c) => LOOKALIKES[c] ?? c)
          : word,
      )
      .replace(/[\u00A0\u202F\u2009\u2007]/g, ' ')
      .replace(/[−–]/g, '-')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

/** A cash deposit names the machine where a payer would stand: it is not a transfer from anyone. */
const NOT_A_PAYER = /^(?:банкомат|терминал|atm|ATM \d+|терминал \d+|ITT \d+)$/i;

/**
 * "ИВАН ИВАНОВ." → "ИВАН ИВАНОВ", "ИВАН И" → "ИВАН И.": a trailing dot is sentence punctuation
 * unless it closes an initial, and the patterns may have stopped on either side of it.
 */
function cleanSender(raw: string | undefined): string | undefined {
  const name = raw
    ?.trim()
    .replace(/[.,:;]+$/, '')
    .trim();
  if (!name || NOT_A_PAYER.test(name)) return undefined;
  return /(?:^|[\s.])[A-Za-zА-Яа-яЁё]$/.test(name) ? `${name}.` : name;
}

/** The digits a requisite shows: a card's last 4, an account's or a phone's after its mask. */
function requisiteDigits(groups: Record<string, string | undefined>): Pick<ParsedCredit, 'digits' | 'digitsKind'> {
  for (const kind of ['card', 'account', 'phone'] as const) {
    const raw = groups[kind];
    if (raw === undefined) continue;
    const parts = raw.split(MASK);
    const visible = parts[parts.length - 1]!.replace(/\D/g, '');
    return { digits: kind === 'card' ? visible.slice(-4) : visible, digitsKind: kind };
  }
  return {};
}

const AFTER_BALANCE = /(?:баланс|доступно|остаток|лимит|balans|dostupno|ostatok|limit|balance)[^\d]{0,12}$/i;

/** Applies one compiled pattern; undefined unless its amount reads as one of `direction`. */
function applyPattern(pattern: RegExp, text: string, form: BankForm, direction: Direction): Omit<ParsedCredit, 'bank'> | undefined {
  const match = pattern.exec(text);
  const groups = match?.groups;
  // A debit shape that reaches past a balance word has found the balance, not the operation.
  const at = match?.indices?.groups?.amount?.[0];
  if (direction === 'outgoing' && at !== undefined && AFTER_BALANCE.test(text.slice(Math.max(0, at - 24), at))) return undefined;
  const money = groups?.amount === undefined ? undefined : readMoney(groups.amount);
  if (!groups || !money || (money.negative && direction === 'incoming')) return undefined;
  const currency = money.currency ?? form.currency;
  if (!(form.accepts ?? [form.currency]).includes(currency)) return undefined;
  const result: Omit<ParsedCredit, 'bank'> = { direction, amount: money.amount, currency };
  if (form.form !== 'any') result.form = form.form;
  Object.assign(result, requisiteDigits(groups));
  const sender = cleanSender(groups.sender);
  if (sender) result.sender = sender;
  const balance = groups.balance === undefined ? undefined : readMoney(groups.balance);
  if (balance && !balance.negative && (balance.currency ?? currency) === currency) result.balance = balance.amount;
  return result;
}

/** The bank code `name` stands for ("T-Bank" → tinkoff), lower-cased. */
function bankCode(table: CompiledTable, name: string | undefined): string | undefined {
  const code = name?.trim().toLowerCase() || undefined;
  return code === undefined ? undefined : (table.aliases[code] ?? code);
}

/** The bank an SMS sender id or app name belongs to, if the table knows it. */
export function bankForSender(table: CompiledTable, sender: string | undefined): string | undefined {
  if (!sender) return undefined;
  return table.senders.get(sender.trim().toLowerCase())?.[0]?.form.bank;
}

/**
 * Forms in the order tried: those of the hinted bank (the ones using the hinted sender first),
 * then the other forms using the hinted sender, then every other bank's.
 */
function ordered(table: CompiledTable, bank: string | undefined, sender: string | undefined): CompiledForm[] {
  const bySender = new Set(sender ? (table.senders.get(sender.trim().toLowerCase()) ?? []) : []);
  const rank = (f: CompiledForm) => (f.form.bank === bank ? 0 : 2) + (bySender.has(f) ? 0 : 1);
  return [...table.forms].sort((a, b) => rank(a) - rank(b));
}

/**
 * Reads what a bank SMS or push says: an incoming transfer, an outgoing operation, or nothing
 * (undefined) when the text is refused (codes, declines, adverts) or cannot be read with certainty.
 *
 * Incoming first: every bank's credit forms (the hinted bank's first), the generic shapes, then
 * the universal reader (universal.ts: any wording whose amount, direction and recipient are
 * unambiguous); only then the debit shapes, so a debit shape never hides a credit and a credit
 * is only ever read by a credit reading. Forms refine what is read (the payer, the balance); the
 * recipient's digits are taken wherever the text shows them when the form names none.
 *
 * The bank reported is the one the SMS sender or app belongs to when the hint names one: a form
 * of another bank that happens to match never renames it, and a sender no bank uses leaves it
 * "unknown". Without a sender, the requisite's bank (`hint.bank`) orders the forms and names the
 * bank of a reading no bank's form made; a form of another bank names its own (the text is that
 * bank's, whatever the requisite claims).
 */
export function parseWith(table: CompiledTable, text: string, hint: ParseHint = {}): ParsedCredit | undefined {
  let normalized = normalize(text);
  if (!normalized || normalized.length > MAX_LENGTH) return undefined;
  for (const footer of table.footers) normalized = normalized.replace(footer, '').trim();
  if (table.refuse.some((pattern) => pattern.test(normalized))) return undefined;

  const bySender = bankForSender(table, hint.sender);
  const hinted = bankCode(table, hint.bank) ?? bySender;
  // Where the message came from (the SMS sender, the app) names its bank: a form of another bank
  // that happens to match never renames it, and a sender no bank uses names none ("unknown").
  const named = hint.sender?.trim() ? (bySender ?? 'unknown') : undefined;
  const bankOf = (compiled: CompiledForm) => named ?? (compiled.form.form === 'any' ? (hinted ?? 'unknown') : compiled.form.bank);
  const forms = ordered(table, hinted, hint.sender);
  const own = hinted === undefined ? [] : table.forms.filter((f) => f.form.bank === hinted);
  // The form (SMS or push) is the reading form's when it is the reported bank's, else the one the sender names.
  const senderForm = named ? table.senders.get(hint.sender!.trim().toLowerCase())?.find((f) => f.form.bank === named) : undefined;
  const formOf = (parsed: ParsedCredit, compiled?: CompiledForm): ParsedCredit => {
    const { form: _form, ...rest } = parsed;
    const form = compiled && compiled.form.form !== 'any' && compiled.form.bank === parsed.bank ? compiled.form.form : senderForm?.form.form;
    return form && form !== 'any' ? { ...rest, form } : rest;
  };

  for (const compiled of [...forms, ...table.generic]) {
    if (compiled.unless.some((pattern) => pattern.test(normalized))) continue;
    for (const pattern of compiled.credit) {
      const parsed = applyPattern(pattern, normalized, compiled.form, 'incoming');
      if (parsed) return withDigits(formOf({ ...parsed, bank: bankOf(compiled) }, compiled), normalized);
    }
  }

  // Any wording: the hinted bank's own refusals (its savings, its deposits…) still apply.
  if (!own.some((compiled) => compiled.unless.some((pattern) => pattern.test(normalized)))) {
    // A marked amount says its currency; an unmarked one is in the hinted bank's.
    const read = readUniversal(normalized, own[0]?.form.currency, CURRENCIES);
    if (read) return formOf({ direction: 'incoming', ...read, bank: named ?? hinted ?? 'unknown' });
  }

  for (const compiled of [...forms, ...table.generic]) {
    for (const pattern of compiled.debit) {
      const parsed = applyPattern(pattern, normalized, compiled.form, 'outgoing');
      if (parsed) return formOf({ ...parsed, bank: bankOf(compiled) }, compiled);
    }
  }
  return undefined;
}

/** The recipient's digits from anywhere in the text, when the form that read it names none. */
function withDigits(parsed: ParsedCredit, text: string): ParsedCredit {
  if (parsed.digits !== undefined) return parsed;
  const mask = recipientMask(text);
  return mask ? { ...parsed, digits: mask.digits, digitsKind: mask.kind } : parsed;
}
