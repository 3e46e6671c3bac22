import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Decimal } from 'decimal.js';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Queryable, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../lib/validators.js';
import { type CompiledTemplate, compileTemplate, type FormReading, normalizeText, readTemplate, TemplateError } from './forms.js';
import * as repo from './forms.repo.js';
import { bankOfSender, type ParsedCredit, type ParseHint, parseNotification } from './parsers/index.js';

/**
 * Message forms a person taught (docs/devices.md "Teaching a new message form"). A form is
 * consulted only when the built-in parsers read nothing in a text: it never overrides what they
 * read — not a credit, not money going out, not a refusal they can tell (those texts read as
 * something, or are checked against every refused corpus line before a form goes live). Live
 * forms are read from the database on every such text (compiled once per version), so a form
 * put live or retired on one instance applies on every instance from its next message.
 */

/** Holes a person marks on a message, the currencies a form reads. */
export const CURRENCIES = ['RUB', 'KZT', 'TJS'] as const;
/** Kept messages of this many days are checked before a form goes live. */
export const CHECK_DAYS = 30;
/** The most kept messages the check reads (of each kind). */
const CHECK_LIMIT = 20_000;
/** A form whose pattern takes longer than this on one text is refused as too slow. */
const SLOW_MS = 25;

/** A reading by a taught form: what the engine's reading holds, and which form and version read it. */
export type TaughtReading = ParsedCredit & { taught: { form_id: string; version: number; name: string } };

const compiled = new Map<string, CompiledTemplate>();
/** A live version with its compiled pattern (compiled once per version: a version never changes). */
interface Reader {
  version: repo.LiveVersion;
  compiled: CompiledTemplate;
}
function readerOf(version: repo.LiveVersion): Reader {
  let entry = compiled.get(version.id);
  if (!entry) {
    entry = compileTemplate(version.template);
    compiled.set(version.id, entry);
  }
  return { version, compiled: entry };
}

function toReading(reading: FormReading, version: repo.LiveVersion, hintedBank: string | undefined): TaughtReading {
  const result: TaughtReading = {
    direction: 'incoming',
    amount: reading.amount,
    currency: version.currency as ParsedCredit['currency'],
    // A hint names the bank: a form taught for another bank reads the money, never the bank.
    bank: hintedBank ?? version.bank,
    taught: { form_id: version.form_id, version: version.version, name: version.name },
  };
  if (reading.digits) {
    result.digits = reading.digits;
    result.digitsKind = 'card';
  }
  if (reading.payer) result.sender = reading.payer;
  if (reading.balance) result.balance = reading.balance;
  return result;
}

/** The bank a hint names (the requisite's bank, else the sender's). */
function hintedBank(hint: ParseHint): string | undefined {
  return hint.bank?.trim().toLowerCase() || (hint.sender ? bankOfSender(hint.sender) : undefined);
}

/** The first of `readers` (the hinted bank's first, then in the order they went live) that reads `text`. */
function readWith(readers: Reader[], text: string, hint: ParseHint): TaughtReading | undefined {
  const bank = hintedBank(hint);
  const ordered = bank ? [...readers.filter((r) => r.version.bank === bank), ...readers.filter((r) => r.version.bank !== bank)] : readers;
  for (const { version, compiled: pattern } of ordered) {
    const reading = readTemplate(pattern, text);
    if (reading) return toReading(reading, version, bank);
  }
  return undefined;
}

/**
 * What a bank message says: the built-in parsers' reading, or — only when they read nothing —
 * the first live taught form's. Used by the phones' messages and the companion app's texts.
 */
export async function readMessage(db: Queryable, text: string, hint: ParseHint = {}): Promise<ParsedCredit | TaughtReading | undefined> {
  const parsed = parseNotification(text, hint);
  if (parsed) return parsed;
  return readWith((await repo.liveVersions(db)).map(readerOf), text, hint);
}

// ------------------------------------------------------------------ the corpus

interface CorpusLine {
  file: string;
  line: number;
  sign: '+' | '-' | 'x';
  amount: string;
  digits: string;
  text: string;
}

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), 'parsers', 'corpus');
let corpus: CorpusLine[] | undefined;

/** Every line of src/incoming/parsers/corpus/*.tsv (read once; the files ship with the service). */
export function corpusLines(): CorpusLine[] {
  if (corpus) return corpus;
  const lines: CorpusLine[] = [];
  for (const file of readdirSync(CORPUS).filter((name) => name.endsWith('.tsv'))) {
    let header = true;
    readFileSync(join(CORPUS, file), 'utf8')
      .split('\n')
      .forEach((raw, index) => {
        if (!raw.trim() || raw.startsWith('#')) return;
        if (header) {
          header = false;
          return;
        }
        const f = raw.split('\t');
        const sign = f[2] as CorpusLine['sign'];
        if (f.length < 9 || !['+', '-', 'x'].includes(sign)) return;
        // The corpora write a multi-line push's breaks as "\n".
        lines.push({ file: `corpus/${basename(file)}`, line: index + 1, sign, amount: f[3]!, digits: f[5]!, text: f[8]!.replace(/\\n/g, '\n') });
      });
  }
  corpus = lines;
  return lines;
}

// ------------------------------------------------------------------ the check before going live

/** A line the check found: refused lines say why; `reads` is what the candidate reads in it. */
export interface CheckedLine {
  source: string;
  text: string;
  reason: string;
  reads?: { amount: string; digits?: string };
}

export interface CheckReport {
  ok: boolean;
  corpus_lines: number;
  messages: number;
  /** Lines that refuse the form: a negative line it credits, a message whose reading it changes. */
  offending: CheckedLine[];
  /** Kept messages nothing read before that the form reads (as it should). */
  reads_newly: CheckedLine[];
}

/**
 * A reading and how long it took. A slow first measure is taken again (twice more, the least
 * kept): the pattern's first run compiles it, and a busy machine or a collection pauses any run.
 */
function timed(compiledVersion: CompiledTemplate, text: string): { reading: FormReading | undefined; ms: number } {
  let least = Number.POSITIVE_INFINITY;
  let reading: FormReading | undefined;
  for (let run = 0; run < 3 && least > SLOW_MS; run++) {
    const start = performance.now();
    reading = readTemplate(compiledVersion, text);
    least = Math.min(least, performance.now() - start);
  }
  return { reading, ms: least };
}

const same = (a: { amount: string; digits?: string } | undefined, b: { amount: string; digits?: string } | undefined) =>
  a === b || (!!a && !!b && new Decimal(a.amount).eq(b.amount) && (a.digits ?? '') === (b.digits ?? ''));

/**
 * Runs a candidate version against every corpus line and every message kept in the last
 * CHECK_DAYS days. Refused when it credits a negative corpus line (money going out, or a text
 * that must not be read), reads a positive line's amount or digits otherwise than the line says,
 * changes what an existing message read (a taught form's reading; the built-in parsers' readings
 * it can never change), reads a message otherwise than the payment it completed or was linked
 * to, or is too slow on any text.
 */
export async function checkCandidate(db: Queryable, form: repo.FormRow, template: string): Promise<CheckReport> {
  const candidate = compileTemplate(template);
  readTemplate(candidate, ''); // compiled by its first run, before anything is timed
  const offending: CheckedLine[] = [];
  const readsNewly: CheckedLine[] = [];
  let slowest = 0;
  const lines = corpusLines();
  for (const line of lines) {
    const { reading, ms } = timed(candidate, line.text);
    slowest = Math.max(slowest, ms);
    if (!reading) continue;
    const source = `${line.file}:${line.line}`;
    const reads = { amount: reading.amount, digits: reading.digits };
    if (line.sign !== '+') {
      offending.push({
        source,
        text: line.text,
        reason: line.sign === '-' ? 'money going out, read as money received' : 'a text that must not be read, read as money received',
        reads,
      });
    } else if (!new Decimal(reading.amount).eq(line.amount) || (reading.digits && line.digits && !line.digits.endsWith(reading.digits))) {
      offending.push({ source, text: line.text, reason: `the line is ${line.amount}${line.digits ? ` on ${line.digits}` : ''}`, reads });
    }
  }
  // Before: the live forms as they are. After: the same, this form's live version (if any)
  // replaced by the candidate where it stood, or the candidate last.
  const live = (await repo.liveVersions(db)).map(readerOf);
  const candidateReader: Reader = {
    version: { id: 'candidate', form_id: form.id, version: 0, template: candidate.template, name: form.name, bank: form.bank, currency: form.currency },
    compiled: candidate,
  };
  const after = live.some((r) => r.version.form_id === form.id)
    ? live.map((r) => (r.version.form_id === form.id ? candidateReader : r))
    : [...live, candidateReader];
  const kept = await repo.keptMessages(db, CHECK_DAYS, CHECK_LIMIT);
  for (const message of kept) {
    const { reading, ms } = timed(candidate, message.text);
    slowest = Math.max(slowest, ms);
    const hint = { bank: message.bank ?? undefined, sender: message.sender ?? undefined };
    const wasReadByForm = live.length > 0 && readWith(live, message.text, hint) !== undefined;
    if (!reading && !wasReadByForm) continue;
    // What the built-in parsers read is never a form's business: they are asked first.
    if (parseNotification(message.text, hint)) continue;
    const before = readWith(live, message.text, hint);
    const now = readWith(after, message.text, hint);
    const source = `${message.kind === 'device_message' ? 'device message' : 'notification'} ${message.id}`;
    const reads = now ? { amount: now.amount, digits: now.digits } : undefined;
    if (before && !same(before, reads)) {
      offending.push({ source, text: message.text, reason: `read as ${before.amount}${before.digits ? ` on *${before.digits}` : ''} before`, reads });
    } else if (now && message.confirmed !== null && !new Decimal(now.amount).eq(message.confirmed)) {
      offending.push({ source, text: message.text, reason: `its payment was ${message.confirmed}`, reads });
    } else if (now && !before) {
      readsNewly.push({ source, text: message.text, reason: 'read by nothing before', reads });
    }
  }
  if (slowest > SLOW_MS) {
    offending.push({
      source: 'timing',
      text: '',
      reason: `the form took ${slowest.toFixed(0)} ms on one text (at most ${SLOW_MS} ms): keep more of the message's words`,
    });
  }
  return {
    ok: offending.length === 0,
    corpus_lines: lines.length,
    messages: kept.length,
    offending: offending.slice(0, 50),
    reads_newly: readsNewly.slice(0, 50),
  };
}

// ------------------------------------------------------------------ forms and versions

/** Who makes or changes a form: staff (by the audit name) or an executor proposing one from the cabinet. */
export interface FormAuthor {
  name: string;
  executorId: string | null;
}

export interface NewForm {
  name: string;
  bank: string;
  currency: string;
  template: string;
  sample: string;
  source?: { kind: 'device_message' | 'notification'; id: string };
}

function checkedTemplate(template: string, sample: string): { template: string; reading: FormReading } {
  let compiledTemplate: CompiledTemplate;
  try {
    compiledTemplate = compileTemplate(template);
  } catch (err) {
    if (err instanceof TemplateError) throw new DomainError('VALIDATION', `template: ${err.message}`);
    throw err;
  }
  if (normalizeText(sample).length > 1000) throw new DomainError('VALIDATION', 'sample: longer than 1000 characters');
  const reading = readTemplate(compiledTemplate, sample);
  if (!reading) throw new DomainError('VALIDATION', 'template: it does not read the message it was taught from (the sample)');
  return { template: compiledTemplate.template, reading };
}

async function checkSource(db: Queryable, author: FormAuthor, source: NewForm['source']): Promise<void> {
  if (!source) return;
  if (!isUuid(source.id) || !(await repo.teachSource(db, source.kind, source.id, author.executorId))) {
    throw new DomainError('NOT_FOUND', `The ${source.kind === 'device_message' ? 'message' : 'notification'} ${source.id} is not found`);
  }
}

/** A new form as a draft (version 1), audited in its transaction. */
export async function createForm(ctx: AppContext, author: FormAuthor, input: NewForm, audit: AuditRecorder) {
  const name = input.name.trim();
  const bank = input.bank.trim().toLowerCase();
  if (!name) throw new DomainError('VALIDATION', 'name: give the form a name');
  if (!/^[a-z0-9_-]{1,50}$/.test(bank)) throw new DomainError('VALIDATION', 'bank: the bank’s directory code (sberbank, tinkoff, kaspi, …)');
  if (!(CURRENCIES as readonly string[]).includes(input.currency)) throw new DomainError('VALIDATION', `currency: one of ${CURRENCIES.join(', ')}`);
  const { template, reading } = checkedTemplate(input.template, input.sample);
  await checkSource(ctx.db, author, input.source);
  return transaction(ctx.db, async (tx) => {
    const form = await repo.insertForm(tx, { name, bank, currency: input.currency, executor_id: author.executorId, created_by: author.name });
    const version = await repo.insertVersion(tx, {
      form_id: form.id,
      template,
      sample: input.sample.trim(),
      source_kind: input.source?.kind ?? null,
      source_id: input.source?.id ?? null,
      created_by: author.name,
    });
    await audit(tx, 'parser_form.create', 'parser_form', form.id, null, {
      name,
      bank,
      currency: input.currency,
      version: 1,
      template,
      status: 'draft',
      reads: reading,
    });
    return { form, versions: [version] };
  });
}

/** A new draft version of a form (its template changed), audited. */
export async function reviseForm(ctx: AppContext, author: FormAuthor, id: string, input: { template: string; sample: string }, audit: AuditRecorder) {
  const { template, reading } = checkedTemplate(input.template, input.sample);
  return transaction(ctx.db, async (tx) => {
    const form = isUuid(id) ? await repo.findForm(tx, id, author.executorId, true) : undefined;
    if (!form) throw new DomainError('NOT_FOUND', `Form ${id} not found`);
    const version = await repo.insertVersion(tx, {
      form_id: form.id,
      template,
      sample: input.sample.trim(),
      source_kind: null,
      source_id: null,
      created_by: author.name,
    });
    await audit(tx, 'parser_form.revise', 'parser_form', form.id, null, { version: version.version, template, status: 'draft', reads: reading });
    return { form, versions: await repo.listVersions(tx, [form.id]) };
  });
}

/**
 * Puts a draft version live after the check (checkCandidate): refused with the offending lines
 * (`FORM_REFUSED`, `data.offending`) when it finds any; else the form's previous live version
 * is retired and this one applies to every message from now on. Staff only.
 */
export async function publishForm(ctx: AppContext, author: FormAuthor, id: string, versionNumber: number, audit: AuditRecorder) {
  return transaction(ctx.db, async (tx) => {
    const form = isUuid(id) ? await repo.findForm(tx, id, null, true) : undefined;
    if (!form) throw new DomainError('NOT_FOUND', `Form ${id} not found`);
    const version = await repo.findVersion(tx, form.id, versionNumber);
    if (!version) throw new DomainError('NOT_FOUND', `Form ${id} has no version ${versionNumber}`);
    if (version.status !== 'draft')
      throw new DomainError('CONFLICT', `Version ${versionNumber} is ${version.status}; only a draft goes live`, { status: version.status });
    const report = await checkCandidate(tx, form, version.template);
    if (!report.ok) {
      throw new DomainError(
        'FORM_REFUSED',
        `The form would read ${report.offending.length} line(s) wrongly: ${report.offending[0]!.source} — ${report.offending[0]!.reason}`,
        {
          offending: report.offending,
          corpus_lines: report.corpus_lines,
          messages: report.messages,
        },
      );
    }
    const retired = await repo.retireLive(tx, form.id);
    const live = await repo.publishVersion(tx, version.id, author.name, report);
    if (!live) throw new DomainError('CONFLICT', `Version ${versionNumber} is no longer a draft`);
    await audit(tx, 'parser_form.publish', 'parser_form', form.id, retired ? { live_version: retired.version } : { live_version: null }, {
      live_version: live.version,
      template: live.template,
      corpus_lines: report.corpus_lines,
      messages: report.messages,
      reads_newly: report.reads_newly.length,
    });
    return { form, versions: await repo.listVersions(tx, [form.id]), check: report };
  });
}

/** Stops applying a form (its live version retired), audited. */
export async function retireForm(ctx: AppContext, id: string, audit: AuditRecorder) {
  return transaction(ctx.db, async (tx) => {
    const form = isUuid(id) ? await repo.findForm(tx, id, null, true) : undefined;
    if (!form) throw new DomainError('NOT_FOUND', `Form ${id} not found`);
    const retired = await repo.retireLive(tx, form.id);
    if (!retired) throw new DomainError('CONFLICT', 'The form has no live version');
    await audit(tx, 'parser_form.retire', 'parser_form', form.id, { live_version: retired.version }, { live_version: null });
    return { form, versions: await repo.listVersions(tx, [form.id]) };
  });
}

/** What a check would say now, without changing anything (the console shows it before going live). */
export async function dryCheck(ctx: AppContext, id: string, versionNumber: number): Promise<CheckReport> {
  const form = isUuid(id) ? await repo.findForm(ctx.db, id, null) : undefined;
  if (!form) throw new DomainError('NOT_FOUND', `Form ${id} not found`);
  const version = await repo.findVersion(ctx.db, form.id, versionNumber);
  if (!version) throw new DomainError('NOT_FOUND', `Form ${id} has no version ${versionNumber}`);
  return checkCandidate(ctx.db, form, version.template);
}

export async function listForms(ctx: AppContext, executorId: string | null) {
  const forms = await repo.listForms(ctx.db, executorId);
  const versions = await repo.listVersions(
    ctx.db,
    forms.map((f) => f.id),
  );
  return forms.map((form) =>
    toForm(
      form,
      versions.filter((v) => v.form_id === form.id),
    ),
  );
}

export async function getForm(ctx: AppContext, id: string, executorId: string | null) {
  const form = isUuid(id) ? await repo.findForm(ctx.db, id, executorId) : undefined;
  if (!form) throw new DomainError('NOT_FOUND', `Form ${id} not found`);
  return toForm(form, await repo.listVersions(ctx.db, [form.id]));
}

/** A form as the API shows it: its status is its live version's, else draft (or retired when every version is). */
export function toForm(form: repo.FormRow, versions: repo.VersionRow[]) {
  const live = versions.find((v) => v.status === 'live');
  const status = live ? 'live' : versions.some((v) => v.status === 'draft') ? 'draft' : 'retired';
  return {
    id: form.id,
    name: form.name,
    bank: form.bank,
    currency: form.currency,
    status,
    live_version: live?.version ?? null,
    proposed_by_executor: form.executor_id,
    created_by: form.created_by,
    created_at: form.created_at.toISOString(),
    versions: versions.map((v) => ({
      version: v.version,
      template: v.template,
      sample: v.sample,
      status: v.status,
      source_kind: v.source_kind,
      source_id: v.source_id,
      created_by: v.created_by,
      created_at: v.created_at.toISOString(),
      published_by: v.published_by,
      published_at: v.published_at?.toISOString() ?? null,
      retired_at: v.retired_at?.toISOString() ?? null,
    })),
  };
}

// ------------------------------------------------------------------ teaching from a message

/** A span of the message a person marked (offsets in the text as the API gives it). */
export interface Mark {
  hole: 'amount' | 'card' | 'payer' | 'balance' | 'time' | 'date';
  start: number;
  end: number;
}

/** Where `needle`'s digits stand in `text` written as an amount ("1 500", "1500,00", …): the first span. */
function findAmount(text: string, amount: string): { start: number; end: number } | undefined {
  const value = new Decimal(amount);
  for (const match of text.matchAll(/\d{1,3}(?:[ \u00A0,.]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?/g)) {
    const compact = match[0].replace(/[ \u00A0]/g, '');
    const decimal = /[.,](\d{1,2})$/.exec(compact);
    const whole = (decimal ? compact.slice(0, decimal.index) : compact).replace(/[.,]/g, '');
    if (new Decimal(`${whole}.${decimal?.[1] ?? '0'}`).eq(value)) return { start: match.index!, end: match.index! + match[0].length };
  }
  return undefined;
}

/**
 * What the console prefills when a person teaches a form from a message: the text, the bank (the
 * requisite's, or the sender's), the currency, and the spans it can find — the amount (what the
 * parsers read, else the linked payment's amount), the card (the requisite's last four digits, or a
 * masked number), times and dates. The person corrects and adds to them.
 */
export async function suggestForm(ctx: AppContext, kind: 'device_message' | 'notification', id: string, executorId: string | null) {
  const source = isUuid(id) ? await repo.teachSource(ctx.db, kind, id, executorId) : undefined;
  if (!source) throw new DomainError('NOT_FOUND', `The ${kind === 'device_message' ? 'message' : 'notification'} ${id} is not found`);
  const text = source.text;
  const marks: Mark[] = [];
  const taken = (start: number, end: number) => marks.some((m) => start < m.end && m.start < end);
  const amount = source.amount ?? source.payment_amount;
  const amountAt = amount ? findAmount(text, amount) : undefined;
  if (amountAt) marks.push({ hole: 'amount', ...amountAt });
  const tail = source.requisite_digits?.slice(-4);
  const card = tail ? new RegExp(`(?:[*•xX]+ ?)?${tail}(?!\\d)`).exec(text) : /[*•xX]{1,12} ?\d{4}(?!\d)/.exec(text);
  if (card && !taken(card.index, card.index + card[0].length)) marks.push({ hole: 'card', start: card.index, end: card.index + card[0].length });
  for (const match of text.matchAll(/\b\d{1,2}:\d{2}(?::\d{2})?\b/g)) {
    if (!taken(match.index!, match.index! + match[0].length)) marks.push({ hole: 'time', start: match.index!, end: match.index! + match[0].length });
  }
  for (const match of text.matchAll(/\b\d{1,4}[./-]\d{1,2}(?:[./-]\d{2,4})?\b/g)) {
    if (!taken(match.index!, match.index! + match[0].length) && marks.filter((m) => m.hole === 'date').length < 2) {
      marks.push({ hole: 'date', start: match.index!, end: match.index! + match[0].length });
    }
  }
  const balance = /(?:баланс|остаток|доступно|balans|ostatok|dostupno)[:\s]+(\d[\d \u00A0.,]*\d|\d)/i.exec(text);
  if (balance) {
    const start = balance.index + balance[0].length - balance[1]!.length;
    if (!taken(start, start + balance[1]!.length)) marks.push({ hole: 'balance', start, end: start + balance[1]!.length });
  }
  marks.sort((a, b) => a.start - b.start);
  const bank = source.bank ?? (source.sender ? bankOfSender(source.sender) : undefined) ?? null;
  return { text, bank, currency: source.currency ?? 'RUB', marks };
}

// ------------------------------------------------------------------ export

const tsv = (value: string | undefined) => (value ?? '').replace(/[\t\r]/g, ' ').replace(/\n/g, '\\n');

/**
 * The live forms' samples as corpus lines (src/incoming/parsers/corpus/<bank>.tsv), one section
 * per bank: what a release adds so that the built-in parsers learn them. The samples are real
 * messages — read them before committing (a payer's name is personal data).
 */
export async function exportForms(ctx: AppContext): Promise<string> {
  const forms = await listForms(ctx, null);
  const byBank = new Map<string, string[]>();
  for (const form of forms) {
    const live = form.versions.find((v) => v.status === 'live');
    if (!live) continue;
    const reading = readTemplate(compileTemplate(live.template), live.sample);
    if (!reading) continue;
    const line = [
      'sms',
      '',
      '+',
      reading.amount,
      form.currency,
      reading.digits ? `card:${reading.digits}` : '',
      reading.payer ?? '',
      reading.balance ?? '',
      tsv(live.sample),
      `derived: taught as "${tsv(form.name)}" v${live.version} by ${tsv(live.created_by)}, live since ${live.published_at}; template ${tsv(live.template)}`,
    ].join('\t');
    byBank.set(form.bank, [...(byBank.get(form.bank) ?? []), line]);
  }
  const sections = [...byBank.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([bank, lines]) => [`# corpus/${bank}.tsv`, ...lines].join('\n'));
  return `# Taught message forms as corpus lines (form sender sign amount currency digits payer balance text source): append each section to its file.\n${sections.join('\n')}\n`;
}
