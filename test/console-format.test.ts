/**
 * The web app's formats and words on their own (issue 33 items 5 and 7), without a browser:
 * web/src/i18n/format.ts (moments, durations, percentages, money, card numbers in each language),
 * web/src/i18n/validation.ts (the field and rule an API validation message names), and the two
 * dictionaries: the same keys in both, real Russian in ru.json, and a name in both languages for
 * every status, payment method, role, error code and ledger posting the server can send.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors.js';
import { ROLES } from '../src/lib/actor.js';
import { METHODS, REQUISITE_TYPES } from '../src/lib/methods.js';
import { PAYOUT_STATUSES } from '../src/payouts/payouts.repo.js';
import {
  currencySign,
  formatDate,
  formatDateTime,
  formatDecimal,
  formatDuration,
  formatMoney,
  formatPercent,
  groupCard,
  timeZoneLabel,
} from '../web/src/i18n/format.js';
import { parseValidation } from '../web/src/i18n/validation.js';

/** Intl writes no-break spaces (U+00A0, U+202F) where a person sees a space. */
const spaces = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

describe('formats of the two languages (web/src/i18n/format.ts)', () => {
  it('durations as a person says them, two largest units', () => {
    expect(spaces(formatDuration(200, 'ru'))).toBe('3 мин 20 с');
    expect(spaces(formatDuration(200, 'en'))).toBe('3 min 20 s');
    expect(spaces(formatDuration(45, 'ru'))).toBe('45 с');
    expect(spaces(formatDuration(3600 + 5 * 60 + 9, 'en'))).toBe('1 h 5 min');
    expect(spaces(formatDuration(2 * 86400 + 3600, 'ru'))).toBe('2 дн 1 ч');
    expect(spaces(formatDuration(0, 'ru'))).toBe('0 с');
    expect(formatDuration(null, 'ru')).toBe('—');
  });

  it('percentages: "12,5 %" in Russian, "12.5%" in English, from a fraction or a percent', () => {
    expect(spaces(formatPercent(12.5, 'ru'))).toBe('12,5 %');
    expect(formatPercent(12.5, 'en')).toBe('12.5%');
    expect(spaces(formatPercent('0.125', 'ru', { fraction: true }))).toBe('12,5 %');
    expect(spaces(formatPercent(1.5, 'ru', { sign: true }))).toBe('+1,5 %');
    expect(formatPercent(null, 'en')).toBe('—');
  });

  it('money keeps every digit the API gave, grouped as the language groups it, with ₽ in Russian and the code in English', () => {
    expect(spaces(formatMoney('1500', 'RUB', 'ru'))).toBe('1 500 ₽');
    expect(spaces(formatMoney(1500, 'RUB', 'en'))).toBe('1,500 RUB');
    expect(spaces(formatMoney('1500.00', 'RUB', 'en'))).toBe('1,500.00 RUB');
    expect(spaces(formatMoney('-12.345678', 'USDT', 'ru'))).toBe('-12,345678 USDT');
    // Beyond a double's precision: nothing rounded.
    expect(spaces(formatDecimal('123456789012345678901.000001', 'ru'))).toBe('123 456 789 012 345 678 901,000001');
    expect(formatDecimal('12345678901234567890.5', 'en')).toBe('12,345,678,901,234,567,890.5');
    expect(currencySign('KZT', 'ru')).toBe('₸');
    expect(currencySign('USDT', 'ru')).toBe('USDT');
    expect(formatMoney(null, 'RUB', 'ru')).toBe('—');
  });

  it('ONE date-time format per language, in the zone asked for', () => {
    const at = '2026-11-27T11:05:33.120Z';
    expect(formatDateTime(at, 'ru', 'Europe/Moscow')).toBe('27.11.2026, 14:05:33');
    expect(formatDateTime(at, 'en', 'Europe/Moscow')).toBe('27/11/2026, 14:05:33');
    expect(formatDateTime(at, 'ru', 'UTC')).toBe('27.11.2026, 11:05:33');
    expect(formatDate(at, 'ru', 'UTC')).toBe('27.11.2026');
    expect(formatDateTime(null, 'ru')).toBe('—');
    expect(timeZoneLabel('ru', new Date(at), 'Europe/Moscow')).toBe('Europe/Moscow (GMT+3)');
  });

  it('card numbers in fours, masked ones too; phones and words untouched', () => {
    expect(groupCard('2200********1234')).toBe('2200 **** **** 1234');
    expect(groupCard('2200700123456781')).toBe('2200 7001 2345 6781');
    expect(groupCard('2200 7001-2345 6781')).toBe('2200 7001 2345 6781');
    expect(groupCard('220070******6781')).toBe('2200 70** **** 6781');
    expect(groupCard('+79001234567')).toBe('+79001234567');
    expect(groupCard('Ivan')).toBe('Ivan');
    expect(groupCard(null)).toBe('');
  });
});

describe('validation messages read for their field (web/src/i18n/validation.ts)', () => {
  it('names the field and the rule of what src/http/validation.ts writes', () => {
    expect(parseValidation('amount must be a number')).toEqual({ field: 'amount', rule: 'type.number' });
    expect(parseValidation('email is required')).toEqual({ field: 'email', rule: 'required' });
    expect(parseValidation('name must not be empty')).toEqual({ field: 'name', rule: 'empty' });
    expect(parseValidation('code must match pattern "^[a-z0-9_]{2,64}$"')).toEqual({ field: 'code', rule: 'pattern' });
    expect(parseValidation('query parameter status must be one of: a, b')).toEqual({ field: 'status', rule: 'oneOf', values: { allowed: 'a, b' } });
    expect(parseValidation('reason must be at most 1000 characters')).toEqual({ field: 'reason', rule: 'maxLength', values: { limit: '1000' } });
    expect(parseValidation('amount must not be zero: a positive amount tops the deposit up')).toEqual({ field: 'amount', rule: 'zero' });
    // A sentence that names no field is left to be shown as it is.
    expect(parseValidation('The adjustment would make the available balance negative')).toBeUndefined();
  });
});

const en = JSON.parse(readFileSync(new URL('../web/src/i18n/en.json', import.meta.url), 'utf8')) as Record<string, string>;
const ru = JSON.parse(readFileSync(new URL('../web/src/i18n/ru.json', import.meta.url), 'utf8')) as Record<string, string>;

/** Latin words a Russian screen may show: names of things (Kassir, USDT, API, X-Signature, EMV, Telegram and its Start button), formats and file types, field and variable names, and the one-letter keyboard keys. */
const LATIN_IN_RUSSIAN = new Set(
  'Kassir USDT API CSV ID QR SIM TRC PNG JPEG WebP HEIC PDF HTTPS URL METHOD BODY HMAC SHA Secret Key Signature ext_id base localhost payments VietQR png jpg webp heic pdf RUB EMV notify_url http https KASSIR_ROUTE_BUDGET_MS PAYOUT docs devices md IP Telegram BotFather TELEGRAM_BOT_TOKEN README Start'.split(
    ' ',
  ),
);

describe('the dictionaries (web/src/i18n/en.json, ru.json)', () => {
  it('have the same keys, and the same {placeholders} in each text', () => {
    expect(Object.keys(ru).sort()).toEqual(Object.keys(en).sort());
    const placeholders = (text: string) => (text.match(/\{[a-z_]+\}/gi) ?? []).sort();
    for (const key of Object.keys(en)) expect(placeholders(ru[key]!), key).toEqual(placeholders(en[key]!));
  });

  it('Russian is Russian: no English word left where a translation belongs', () => {
    const untranslated: string[] = [];
    for (const [key, text] of Object.entries(ru)) {
      // The forwarder apps' own names (as their stores list them) stay as they are.
      if (key.startsWith('devices.app.')) continue;
      const words = text.replace(/\{[a-z_]+\}/gi, '').match(/[A-Za-z][A-Za-z_]*/g) ?? [];
      const english = words.filter((word) => word.length > 1 && !LATIN_IN_RUSSIAN.has(word));
      if (english.length > 0) untranslated.push(`${key}: ${english.join(' ')}`);
    }
    expect(untranslated).toEqual([]);
  });

  it('name every risk rule, decision and block kind the server sends, in both languages (issue 36)', () => {
    const keys = [
      ...['block', 'velocity', 'traffic_class', 'receipt_reused', 'reference_reused', 'payer_name'].map((rule) => `risk.rule.${rule}`),
      ...['refused', 'flagged'].map((action) => `risk.action.${action}`),
      ...['client_id', 'card', 'phone', 'ip', 'device'].map((kind) => `risk.kind.${kind}`),
      'timeline.risk_hit',
      'nav.risk',
    ];
    for (const key of keys) {
      expect(en[key], key).toBeTruthy();
      expect(ru[key], key).toBeTruthy();
      expect(ru[key], key).not.toBe(en[key]);
    }
  });

  it('name every status, method, requisite kind, role, error code and posting the server sends, in both languages', () => {
    const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL', 'CANCELLED', 'CANCELLED_APPEAL', 'DISPUTE'];
    const OTHER_STATUSES = ['open', 'approved', 'rejected', 'matched', 'unmatched', 'late', 'resolved', 'ambiguous', 'unreadable', 'ignored', 'delivered'];
    const POSTINGS = [
      'payin_hold',
      'payin_hold_release',
      'payin',
      'payout_reserve',
      'payout_release',
      'payout_settle',
      'withdrawal_reserve',
      'withdrawal_release',
      'withdrawal_settle',
      'executor_deposit',
      'executor_adjustment',
      'adjustment',
      'transfer',
    ];
    const codes = Object.entries(ERRORS).map(([key, entry]) => (entry as { code?: string }).code ?? key);
    const wanted = [
      ...[...PAYMENT_STATUSES, ...PAYOUT_STATUSES, ...OTHER_STATUSES].map((s) => `status.${s}`),
      ...METHODS.map((m) => `method.${m}`),
      ...REQUISITE_TYPES.map((r) => `requisiteType.${r}`),
      ...ROLES.map((r) => `role.${r}`),
      ...codes.map((c) => `error.code.${c}`),
      'error.code.PAYOUT_NOT_FOUND',
      'error.code.NETWORK',
      ...POSTINGS.map((p) => `ledger.${p}`),
      ...['payment', 'payout', 'withdrawal'].map((type) => `statement.about.${type}`),
    ];
    expect(wanted.filter((key) => !(key in en))).toEqual([]);
    expect(wanted.filter((key) => !(key in ru))).toEqual([]);
    // A status in Russian is a Russian word, never the API's code.
    for (const key of wanted.filter((k) => k.startsWith('status.'))) expect(ru[key], key).toMatch(/[а-яё]/i);
    expect(en['error.generic']).not.toBe('Something went wrong');
  });
});
