import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BANK_FORMS } from './banks.js';
import { bankOfSender, type ParsedCredit, parseIncomingCredit, parseNotification } from './index.js';

/**
 * Every line of every corpus file (corpus/<bank>.tsv) is checked: an incoming sample must read
 * exactly (amount, currency, the requisite's digits, the payer, the balance) with its bank's own
 * form, and still keep its amount whatever bank the requisite claims; a debit must never read as
 * money received; a refused text must not read at all, under any bank's hint.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const CORPUS = join(HERE, 'corpus');
const HEADER = ['form', 'sender', 'sign', 'amount', 'currency', 'digits', 'payer', 'balance', 'text', 'source'];

interface Sample {
  bank: string;
  line: number;
  form: 'sms' | 'push';
  sender: string;
  sign: '+' | '-' | 'x';
  amount: string;
  currency: string;
  digits: string;
  payer: string;
  balance: string;
  text: string;
  source: string;
}

function readCorpus(file: string): Sample[] {
  const bank = basename(file, '.tsv');
  const lines = readFileSync(join(CORPUS, file), 'utf8').split('\n');
  const samples: Sample[] = [];
  let header: string[] | undefined;
  lines.forEach((raw, index) => {
    if (!raw.trim() || raw.startsWith('#')) return;
    const fields = raw.split('\t');
    if (!header) {
      header = fields;
      expect(header, `${file}: header`).toEqual(HEADER);
      return;
    }
    expect(fields, `${file}:${index + 1} has ${HEADER.length} tab-separated fields`).toHaveLength(HEADER.length);
    const [form, sender, sign, amount, currency, digits, payer, balance, text, source] = fields as [string, ...string[]];
    expect(['sms', 'push'], `${file}:${index + 1} form`).toContain(form);
    expect(['+', '-', 'x'], `${file}:${index + 1} sign`).toContain(sign);
    expect(source, `${file}:${index + 1} names its source`).toMatch(/^(?:https?:\/\/|derived: )\S/);
    samples.push({
      bank,
      line: index + 1,
      form: form as Sample['form'],
      sender: sender!,
      sign: sign as Sample['sign'],
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

const FILES = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.tsv'))
  .sort();
const SAMPLES = FILES.flatMap(readCorpus);
const BANKS = [...new Set(SAMPLES.map((s) => s.bank))];
const label = (s: Sample) => `${s.bank}.tsv:${s.line} ${s.text.replace(/\n/g, ' ⏎ ')}`;

function expected(s: Sample): ParsedCredit {
  const result: ParsedCredit = { direction: 'incoming', amount: s.amount, currency: s.currency as ParsedCredit['currency'], bank: s.bank, form: s.form };
  if (s.digits) {
    const [kind, digits] = s.digits.split(':') as [ParsedCredit['digitsKind'], string];
    result.digits = digits;
    result.digitsKind = kind;
  }
  if (s.payer) result.sender = s.payer;
  if (s.balance) result.balance = s.balance;
  return result;
}

/** The Russian, Kazakh and Tajik banks of the directory (kind 'bank'). */
function directoryBanks(): string[] {
  const seed = readFileSync(join(HERE, '../../db/migrations/002_banks_seed.sql'), 'utf8');
  return [...seed.matchAll(/\(\s*'([a-z_0-9]+)',\s*'[^']*',\s*'(RU|KZ|TJ)',\s*'bank'\s*\)/g)].map((m) => m[1]!).sort();
}

describe('the corpus', () => {
  it('has a file for every Russian, Kazakh and Tajik bank of the directory, and a table entry for each', () => {
    const directory = directoryBanks();
    expect(directory.length).toBeGreaterThanOrEqual(28);
    expect(BANKS.sort()).toEqual(directory);
    for (const bank of directory) {
      expect(
        BANK_FORMS.filter((f) => f.bank === bank)
          .map((f) => f.form)
          .sort(),
        bank,
      ).toEqual(['push', 'sms']);
    }
  });

  it.each(BANKS)('%s has incoming samples of both forms and negatives', (bank) => {
    const own = SAMPLES.filter((s) => s.bank === bank);
    expect(own.length).toBeGreaterThanOrEqual(6);
    expect(new Set(own.filter((s) => s.sign === '+').map((s) => s.form))).toEqual(new Set(['sms', 'push']));
    expect(own.filter((s) => s.sign === '+').length).toBeGreaterThanOrEqual(3);
    expect(own.filter((s) => s.sign === '-').length).toBeGreaterThanOrEqual(2);
    expect(own.filter((s) => s.sign === 'x').length).toBeGreaterThanOrEqual(1);
  });

  it('has no sample twice', () => {
    const texts = SAMPLES.map((s) => s.text);
    expect(texts.filter((t, i) => texts.indexOf(t) !== i)).toEqual([]);
  });
});

describe.each(BANKS)('%s', (bank) => {
  const own = SAMPLES.filter((s) => s.bank === bank);
  const positive = own.filter((s) => s.sign === '+');
  const debit = own.filter((s) => s.sign === '-');
  const refused = own.filter((s) => s.sign === 'x');

  it.each(positive.map((s) => [label(s), s] as const))('reads %s', (_, s) => {
    // The requisite's bank as the hint (how notifications.service calls it); only the sender
    // tells an SMS from a push worded alike, so the form is checked with the sender below…
    const { form: _form, ...withoutForm } = expected(s);
    expect(parseIncomingCredit(s.text, { bank }), 'with the bank').toMatchObject(withoutForm);
    expect(Object.keys(parseIncomingCredit(s.text, { bank })!).sort(), 'no other field').toEqual(Object.keys(expected(s)).sort());
    // …the SMS sender or app alone (how a device reports it)…
    if (s.sender) {
      expect(bankOfSender(s.sender), `sender ${s.sender}`).toBe(bank);
      expect(parseIncomingCredit(s.text, { sender: s.sender }), 'with the sender').toStrictEqual(expected(s));
    }
    // …and nothing known: the same amount and currency.
    expect(parseIncomingCredit(s.text), 'without a hint').toMatchObject({ direction: 'incoming', amount: s.amount, currency: s.currency });
  });

  if (debit.length) {
    it.each(debit.map((s) => [label(s), s] as const))('never credits %s', (_, s) => {
      for (const hint of [{ bank }, { sender: s.sender }, {}]) {
        expect(parseIncomingCredit(s.text, hint), JSON.stringify(hint)).toBeUndefined();
        const read = parseNotification(s.text, hint);
        // Read as money leaving (with its amount), or refused outright; never anything else.
        if (read) expect(read, JSON.stringify(hint)).toMatchObject({ direction: 'outgoing', amount: s.amount, currency: s.currency });
      }
    });
  }

  it.each(refused.map((s) => [label(s), s] as const))('refuses %s', (_, s) => {
    expect(parseNotification(s.text, { bank })).toBeUndefined();
    expect(parseNotification(s.text, { sender: s.sender })).toBeUndefined();
    expect(parseNotification(s.text)).toBeUndefined();
  });
});

describe('every sample under every bank hint', () => {
  const negatives = SAMPLES.filter((s) => s.sign !== '+');
  const positives = SAMPLES.filter((s) => s.sign === '+');

  it.each(BANKS)('no negative sample of any bank reads as a credit with hint %s', (bank) => {
    for (const s of negatives) expect(parseIncomingCredit(s.text, { bank }), label(s)).toBeUndefined();
  });

  it.each(BANKS)('every incoming sample keeps its amount and currency with hint %s', (bank) => {
    for (const s of positives) {
      expect(parseIncomingCredit(s.text, { bank }), label(s)).toMatchObject({ amount: s.amount, currency: s.currency });
    }
  });
});
