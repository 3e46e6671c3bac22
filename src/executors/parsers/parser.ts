import { moneyGroup, readAmount } from './amount.js';

/** An incoming transfer read from the text of a bank's SMS or push notification. */
export interface ParsedTransfer {
  /** The credited amount, two decimals ("1500.00"); never the balance. */
  amount: string;
  currency: 'RUB';
  /** Bank directory code whose notification format matched (sberbank, tinkoff, alfabank, …). */
  bank: string;
  /** The payer's name as the bank shows it ("ИВАН И."), when the notification has one. */
  sender?: string;
  /** The balance after the credit, when the notification has one. */
  balance?: string;
}

/** Reads one bank's notification formats. */
export interface BankParser {
  readonly bank: string;
  /** The incoming transfer in `text` (already normalised by index.ts), or undefined. */
  parse(text: string): ParsedTransfer | undefined;
}

/** The credited amount; every pattern names it. */
export const AMOUNT = moneyGroup('amount');
/** The balance after the credit ("Баланс", "Доступно", "Остаток"). */
export const BALANCE = moneyGroup('balance');
/** A payer's name: no digits, so it never swallows an amount or a card number. */
export const SENDER = '(?<sender>[^\\d+*;|]+?)';
/** Where a payer's name ends in the notifications we know. */
export const SENDER_END =
  '(?=,? (?:по|через) СБП|\\.? (?:Баланс|Доступно|Остаток|Сообщение|Сч[её]т|Карта)|[.,]?$)';

/** A case-insensitive regular expression written without doubled backslashes. */
export function re(strings: TemplateStringsArray, ...fragments: string[]): RegExp {
  return new RegExp(String.raw(strings, ...fragments), 'i');
}

/**
 * "ИВАН ИВАНОВ." → "ИВАН ИВАНОВ", "ИВАН И" → "ИВАН И.": a trailing dot is sentence punctuation
 * unless it closes an initial, and the patterns may have stopped on either side of it.
 */
function cleanSender(raw: string | undefined): string | undefined {
  const name = raw?.trim().replace(/[.,:;]+$/, '').trim();
  if (!name) return undefined;
  return /(?:^|[\s.])[A-Za-zА-Яа-яЁё]$/.test(name) ? `${name}.` : name;
}

/**
 * A bank parser trying `patterns` in order. Each pattern names the group `amount` and may name
 * `sender` and `balance`; the first whose amount reads wins.
 */
export function patternParser(bank: string, patterns: readonly RegExp[]): BankParser {
  return {
    bank,
    parse(text) {
      for (const pattern of patterns) {
        const groups = pattern.exec(text)?.groups;
        const amount = groups?.amount === undefined ? undefined : readAmount(groups.amount);
        if (!amount) continue;
        const result: ParsedTransfer = { amount, currency: 'RUB', bank };
        const sender = cleanSender(groups?.sender);
        if (sender) result.sender = sender;
        const balance = groups?.balance === undefined ? undefined : readAmount(groups.balance);
        if (balance) result.balance = balance;
        return result;
      }
      return undefined;
    },
  };
}
