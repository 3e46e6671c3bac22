import { Decimal } from 'decimal.js';

/**
 * A message form a person taught Kassir, as text: the message's own words kept literally, the
 * parts that change from one message to the next replaced by typed holes —
 *
 *   {amount}   the money received ("1 500", "1500.00", "1 500,50"): the currency mark stays literal
 *   {card}     the recipient's card, account or phone as shown ("*1234", "8105", "4*8274"): its last digits
 *   {payer}    the payer's name: up to 60 characters without digits
 *   {balance}  the balance after the operation (a number, as {amount})
 *   {time}     "12:34", "12:34:56"        {date}  "12.03", "12.03.24", "2024-03-12"
 *   {any}      up to 80 characters of anything (a payer's note, an advert)
 *
 * A template is compiled to one anchored regular expression (the whole message, case-insensitive)
 * in which every literal character is escaped: a person never writes a pattern, so nothing a
 * person typed is ever run as one. Each hole is bounded, {amount} appears once, the others at most
 * once ({any}, {time} and {date} twice), two free holes ({payer}, {any}) never touch, and a
 * template must keep words of its own — so a form cannot match everything, and no template can
 * make the matcher backtrack without end (the check before a form goes live also times it).
 */

export const HOLES = ['amount', 'card', 'payer', 'balance', 'time', 'date', 'any'] as const;
export type Hole = (typeof HOLES)[number];

/** How many times each hole may appear. */
const MAX_USES: Record<Hole, number> = { amount: 1, card: 1, payer: 1, balance: 1, time: 2, date: 2, any: 2 };
/** Holes whose text is free (words, anything): two of them never touch, or matching could backtrack. */
const FREE: ReadonlySet<Hole> = new Set(['payer', 'any']);

const NUMBER = '\\d{1,3}(?:[ ,.]\\d{3}){1,4}(?:[.,]\\d{1,2})?|\\d{1,12}(?:[.,]\\d{1,2})?';
const SOURCE: Record<Hole, string> = {
  amount: `\\+?(?<amount>${NUMBER})`,
  balance: `(?<balance>${NUMBER})`,
  card: '(?<card>(?:\\d{0,6}[*•xX]{1,12} ?)?\\d{2,6})',
  payer: '(?<payer>[^\\d+*;|]{1,60}?)',
  time: '\\d{1,2}:\\d{2}(?::\\d{2})?',
  date: '\\d{1,4}[./-]\\d{1,2}(?:[./-]\\d{2,4})?',
  any: '.{0,80}?',
};

/** A bank message is a few hundred characters; a template or a text longer than this is not one. */
export const MAX_LENGTH = 1000;
/** A form keeps at least this many letters of its own, so that it names the bank's words. */
const MIN_LETTERS = 5;

/** One line, ordinary spaces and a plain hyphen-minus: what both templates and texts are read as. */
export function normalizeText(text: string): string {
  return text
    .replace(/[\u00A0\u202F\u2009\u2007]/g, ' ')
    .replace(/[−–—]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Why a template cannot be a form: a sentence for the person who wrote it. */
export class TemplateError extends Error {}

export interface CompiledTemplate {
  template: string;
  pattern: RegExp;
  holes: Hole[];
}

/** The parts of a template: literal text and holes, in order. */
export function splitTemplate(template: string): ({ literal: string } | { hole: Hole })[] {
  const parts: ({ literal: string } | { hole: Hole })[] = [];
  let last = 0;
  for (const match of template.matchAll(/\{([a-z]+)\}/g)) {
    const name = match[1]!;
    if (!(HOLES as readonly string[]).includes(name)) throw new TemplateError(`{${name}} is not a hole; the holes are ${HOLES.map((h) => `{${h}}`).join(' ')}`);
    if (match.index! > last) parts.push({ literal: template.slice(last, match.index) });
    parts.push({ hole: name as Hole });
    last = match.index! + match[0].length;
  }
  if (last < template.length) parts.push({ literal: template.slice(last) });
  return parts;
}

const escapeLiteral = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Compiles a template, or throws a TemplateError saying what is wrong with it. */
export function compileTemplate(raw: string): CompiledTemplate {
  const template = normalizeText(raw);
  if (template === '') throw new TemplateError('the template is empty');
  if (template.length > MAX_LENGTH) throw new TemplateError(`the template is longer than ${MAX_LENGTH} characters`);
  const parts = splitTemplate(template);
  const uses = new Map<Hole, number>();
  let letters = 0;
  let source = '';
  let previous: { literal: string } | { hole: Hole } | undefined;
  for (const part of parts) {
    if ('hole' in part) {
      const count = (uses.get(part.hole) ?? 0) + 1;
      if (count > MAX_USES[part.hole]) throw new TemplateError(`{${part.hole}} appears more than ${MAX_USES[part.hole] === 1 ? 'once' : 'twice'}`);
      uses.set(part.hole, count);
      if (previous && 'hole' in previous) throw new TemplateError(`{${previous.hole}}{${part.hole}}: two holes need text between them`);
      if (part.hole === 'amount' && previous && 'literal' in previous && /-\s*$/.test(previous.literal)) {
        throw new TemplateError('a minus before {amount} is money going out: a form reads money received only');
      }
      source += SOURCE[part.hole];
    } else {
      const before = parts[parts.indexOf(part) - 1];
      const after = parts[parts.indexOf(part) + 1];
      if (before && after && 'hole' in before && 'hole' in after && FREE.has(before.hole) && FREE.has(after.hole) && part.literal.trim() === '') {
        throw new TemplateError(`{${before.hole}} and {${after.hole}} need words between them, not only a space`);
      }
      letters += (part.literal.match(/\p{L}/gu) ?? []).length;
      source += escapeLiteral(part.literal);
    }
    previous = part;
  }
  if (!uses.has('amount')) throw new TemplateError('mark the amount: a form without {amount} reads no money');
  if (letters < MIN_LETTERS) throw new TemplateError(`keep at least ${MIN_LETTERS} letters of the message's own words, so that the form is this bank's`);
  return { template, pattern: new RegExp(`^${source}$`, 'iu'), holes: [...uses.keys()] };
}

/** What a form reads in a text. */
export interface FormReading {
  amount: string;
  /** The card's, account's or phone's last digits (4 when it shows as many). */
  digits?: string;
  payer?: string;
  balance?: string;
}

/** "1 500,50" → "1500.50", "1,500.00" → "1500.00", "1.500" → "1500.00"; undefined when it is no amount. */
export function readNumber(raw: string): string | undefined {
  const compact = raw.replace(/ /g, '');
  const decimal = /[.,](\d{1,2})$/.exec(compact);
  const whole = (decimal ? compact.slice(0, decimal.index) : compact).replace(/[.,]/g, '');
  if (!/^\d+$/.test(whole)) return undefined;
  const value = new Decimal(`${whole}.${decimal?.[1] ?? '0'}`);
  return value.toFixed(2);
}

/** What `compiled` reads in `text`, or undefined when the text is not in this form. */
export function readTemplate(compiled: CompiledTemplate, text: string): FormReading | undefined {
  const normalized = normalizeText(text);
  if (normalized.length > MAX_LENGTH) return undefined;
  const groups = compiled.pattern.exec(normalized)?.groups;
  if (!groups?.amount) return undefined;
  const amount = readNumber(groups.amount);
  if (!amount || new Decimal(amount).lte(0)) return undefined;
  const reading: FormReading = { amount };
  if (groups.card) {
    const visible = groups.card
      .split(/[*•xX]/)
      .at(-1)!
      .replace(/\D/g, '');
    reading.digits = visible.slice(-4);
  }
  const payer = groups.payer?.trim().replace(/[,:;]+$/, '');
  if (payer) reading.payer = payer;
  if (groups.balance) {
    const balance = readNumber(groups.balance);
    if (balance) reading.balance = balance;
  }
  return reading;
}
