import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ParsedCredit, type ParseHint, parseIncomingCredit } from './index.js';

/**
 * The corpora (corpus/<bank>.tsv): real bank messages, one a line, each citing where it comes
 * from. Read by corpus.test.ts (every line must keep passing) and by `npm run parsers:report`
 * (how much of them the engine reads). A line's sign is `+` for money received, `-` for money
 * leaving (or anything that must never be credited), `x` for a text refused outright, and `?` for
 * money received by its source's account that Kassir leaves to a person on purpose (a wording that
 * could also be a refund or a limit): counted as incoming and not read, so it lowers the score.
 * A field the source does not label is `?` (payer, balance) or `?:1234` (digits of an unnamed kind).
 */

export const CORPUS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'corpus');
export const CORPUS_HEADER = ['form', 'sender', 'sign', 'amount', 'currency', 'digits', 'payer', 'balance', 'text', 'source'] as const;

export interface Sample {
  bank: string;
  line: number;
  form: 'sms' | 'push';
  sender: string;
  sign: '+' | '-' | 'x' | '?';
  amount: string;
  currency: string;
  /** "card:1234", "account:891", "phone:4567", "?:1234" (kind not labelled), or "" (none shown). */
  digits: string;
  /** The payer as the bank shows it, "" (none), or "?" (not labelled). */
  payer: string;
  /** The balance after the operation, "" (none), or "?" (not labelled). */
  balance: string;
  text: string;
  source: string;
}

/** One corpus file's samples; throws naming the file and line of a malformed one. */
export function readCorpusFile(file: string, dir = CORPUS_DIR): Sample[] {
  const bank = basename(file, '.tsv');
  const samples: Sample[] = [];
  let header = false;
  readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .forEach((raw, index) => {
      if (!raw.trim() || raw.startsWith('#')) return;
      const fields = raw.split('\t');
      const where = `${file}:${index + 1}`;
      if (!header) {
        if (fields.join('\t') !== CORPUS_HEADER.join('\t')) throw new Error(`${where}: the header is not ${CORPUS_HEADER.join(' ')}`);
        header = true;
        return;
      }
      if (fields.length !== CORPUS_HEADER.length) throw new Error(`${where}: ${fields.length} tab-separated fields, not ${CORPUS_HEADER.length}`);
      const [form, sender, sign, amount, currency, digits, payer, balance, text, source] = fields as [string, ...string[]];
      if (form !== 'sms' && form !== 'push') throw new Error(`${where}: form "${form}"`);
      if (sign !== '+' && sign !== '-' && sign !== 'x' && sign !== '?') throw new Error(`${where}: sign "${sign}"`);
      if (!/^(?:https?:\/\/|derived: )\S/.test(source!)) throw new Error(`${where}: the line names no source`);
      if (digits && !/^(?:card|account|phone|\?):\d+$/.test(digits)) throw new Error(`${where}: digits "${digits}"`);
      samples.push({
        bank,
        line: index + 1,
        form,
        sender: sender!,
        sign,
        amount: amount!,
        currency: currency!,
        digits: digits!,
        payer: payer!,
        balance: balance!,
        text: text!.replace(/\\n/g, '\n'),
        source: source!,
      });
    });
  return samples;
}

export function corpusFiles(dir = CORPUS_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.tsv'))
    .sort();
}

export function readCorpus(dir = CORPUS_DIR): Sample[] {
  return corpusFiles(dir).flatMap((file) => readCorpusFile(file, dir));
}

/** The fields a sample labels, as the engine should read them (unlabelled ones left out). */
export function expectedOf(s: Sample): Partial<ParsedCredit> {
  const result: Partial<ParsedCredit> = {
    direction: 'incoming',
    amount: s.amount,
    currency: s.currency as ParsedCredit['currency'],
    bank: s.bank,
    form: s.form,
  };
  if (s.digits) {
    const [kind, digits] = s.digits.split(':') as [string, string];
    result.digits = digits;
    if (kind !== '?') result.digitsKind = kind as ParsedCredit['digitsKind'];
  }
  if (s.payer && s.payer !== '?') result.sender = s.payer;
  if (s.balance && s.balance !== '?') result.balance = s.balance;
  return result;
}

/** The hints a message arrives with: the requisite's bank (the companion app) and the SMS sender or app (a phone). */
export function hintsOf(s: Sample): ParseHint[] {
  return s.sender ? [{ bank: s.bank }, { sender: s.sender }] : [{ bank: s.bank }];
}

export interface BankScore {
  bank: string;
  incoming: number;
  /** Incoming lines whose amount and currency are read under every hint the message comes with. */
  read: number;
  /** Incoming lines that show the recipient's digits. */
  withDigits: number;
  /** Of those, the ones whose digits are read under every hint. */
  digitsRead: number;
  negatives: number;
  /** Negative lines read as money received under any hint (their bank's, their sender's, none, any other bank's). */
  falseCredits: number;
}

/** How much of the corpus the engine reads, per bank. */
export function scoreCorpus(samples: Sample[], parse: (text: string, hint?: ParseHint) => ParsedCredit | undefined = parseIncomingCredit): BankScore[] {
  const banks = [...new Set(samples.map((s) => s.bank))].sort();
  return banks.map((bank) => {
    const own = samples.filter((s) => s.bank === bank);
    const score: BankScore = { bank, incoming: 0, read: 0, withDigits: 0, digitsRead: 0, negatives: 0, falseCredits: 0 };
    for (const s of own) {
      if (s.sign === '+' || s.sign === '?') {
        score.incoming++;
        const reads = hintsOf(s).map((hint) => parse(s.text, hint));
        if (reads.every((r) => r?.amount === s.amount && r.currency === s.currency)) score.read++;
        if (s.digits) {
          score.withDigits++;
          const digits = s.digits.split(':')[1];
          if (reads.every((r) => r?.digits === digits)) score.digitsRead++;
        }
      } else {
        score.negatives++;
        const hints: ParseHint[] = [{}, { sender: s.sender }, ...banks.map((b) => ({ bank: b }))];
        if (hints.some((hint) => parse(s.text, hint) !== undefined)) score.falseCredits++;
      }
    }
    return score;
  });
}

const pct = (part: number, whole: number) => (whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)} %`);

/** The scores as a Markdown table, one row a bank and a total. */
export function reportTable(scores: BankScore[]): string {
  const total = scores.reduce(
    (t, s) => ({
      bank: '**total**',
      incoming: t.incoming + s.incoming,
      read: t.read + s.read,
      withDigits: t.withDigits + s.withDigits,
      digitsRead: t.digitsRead + s.digitsRead,
      negatives: t.negatives + s.negatives,
      falseCredits: t.falseCredits + s.falseCredits,
    }),
    { bank: '', incoming: 0, read: 0, withDigits: 0, digitsRead: 0, negatives: 0, falseCredits: 0 },
  );
  const rows = [...scores, total].map(
    (s) =>
      `| ${s.bank} | ${s.incoming} | ${pct(s.read, s.incoming)} | ${s.withDigits} | ${pct(s.digitsRead, s.withDigits)} | ${s.negatives} | ${s.falseCredits} |`,
  );
  return [
    '| bank | incoming lines | incoming read | lines showing digits | digits read | negative lines | false credits |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}
