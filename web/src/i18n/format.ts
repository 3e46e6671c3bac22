/**
 * How every screen writes numbers, money, moments, durations, percentages and card numbers in the
 * person's language: one function each, built on Intl, with no React and no imports, so that the
 * same code is tested on its own (test/console-format.test.ts) and used by every screen through
 * useFormat() (./index.tsx). Money is never re-computed: a decimal string keeps all its digits.
 */

export type FormatLang = 'en' | 'ru';

/** The Intl locale of a language of the app. */
export function localeOf(lang: FormatLang): string {
  return lang === 'ru' ? 'ru-RU' : 'en-GB';
}

/** The browser's time zone: every moment on every screen is shown in it (and named where times are compared). */
export function timeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** The zone's name as a person reads it, with its offset: "Europe/Moscow (GMT+3)". */
export function timeZoneLabel(lang: FormatLang, at: Date = new Date(), zone: string = timeZone()): string {
  const offset = new Intl.DateTimeFormat(localeOf(lang), { timeZone: zone, timeZoneName: 'shortOffset' })
    .formatToParts(at)
    .find((part) => part.type === 'timeZoneName')?.value;
  return offset ? `${zone} (${offset})` : zone;
}

const DATE_TIME: Intl.DateTimeFormatOptions = {
  day: '2-digit',
  month: '2-digit',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
};

/** THE date-time format of a language, used by every screen: "27.11.2026, 14:05:33" / "27/11/2026, 14:05:33". */
export function formatDateTime(at: string | Date | null | undefined, lang: FormatLang, zone?: string): string {
  if (at === null || at === undefined || at === '') return '—';
  const date = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(date.getTime())) return String(at);
  return new Intl.DateTimeFormat(localeOf(lang), { ...DATE_TIME, timeZone: zone }).format(date);
}

/** The date alone, in the same format: "27.11.2026". */
export function formatDate(at: string | Date | null | undefined, lang: FormatLang, zone?: string): string {
  if (at === null || at === undefined || at === '') return '—';
  const date = at instanceof Date ? at : new Date(at);
  return new Intl.DateTimeFormat(localeOf(lang), { day: '2-digit', month: '2-digit', year: 'numeric', timeZone: zone }).format(date);
}

/** The time of day alone (charts, "out of rotation until"): "14:05" or, with seconds, "14:05:33". */
export function formatTime(at: string | Date, lang: FormatLang, seconds = false, zone?: string): string {
  const date = at instanceof Date ? at : new Date(at);
  return new Intl.DateTimeFormat(localeOf(lang), {
    hour: '2-digit',
    minute: '2-digit',
    second: seconds ? '2-digit' : undefined,
    hourCycle: 'h23',
    timeZone: zone,
  }).format(date);
}

const UNITS = {
  en: { d: 'd', h: 'h', min: 'min', s: 's' },
  ru: { d: 'дн', h: 'ч', min: 'мин', s: 'с' },
} as const;

/** A span of time as a person says it, two largest units: "3 мин 20 с", "1 h 5 min", "45 s". */
export function formatDuration(seconds: number | null | undefined, lang: FormatLang): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const units = UNITS[lang];
  const whole = Math.max(0, Math.round(seconds));
  const parts: [number, string][] = [
    [Math.floor(whole / 86400), units.d],
    [Math.floor((whole % 86400) / 3600), units.h],
    [Math.floor((whole % 3600) / 60), units.min],
    [whole % 60, units.s],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  if (first === -1) return `0\u00a0${units.s}`;
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${new Intl.NumberFormat(localeOf(lang)).format(n)}\u00a0${unit}`)
    .join(' ');
}

/**
 * A percentage: `fraction` true reads 0.125 as 12.5 %, false reads 12.5 as 12.5 %; up to
 * `digits` decimals: "12,5 %" / "12.5%" as each language writes it.
 */
export function formatPercent(
  value: number | string | null | undefined,
  lang: FormatLang,
  options: { fraction?: boolean; digits?: number; sign?: boolean } = {},
): string {
  if (value === null || value === undefined || value === '') return '—';
  const number = Number(value);
  if (!Number.isFinite(number)) return String(value);
  const { fraction = false, digits = 1, sign = false } = options;
  return new Intl.NumberFormat(localeOf(lang), {
    style: 'percent',
    maximumFractionDigits: digits,
    signDisplay: sign ? 'exceptZero' : 'auto',
  }).format(fraction ? number : number / 100);
}

/** A count or a plain number grouped as the language groups it: "1 500" / "1,500". */
export function formatNumber(value: number | string | null | undefined, lang: FormatLang): string {
  if (value === null || value === undefined || value === '') return '—';
  return formatDecimal(String(value), lang);
}

/** The separators of a language, read from Intl: group ("1 000" / "1,000") and decimal ("," / "."). */
function separators(lang: FormatLang): { group: string; decimal: string } {
  const parts = new Intl.NumberFormat(localeOf(lang)).formatToParts(10000.5);
  return { group: parts.find((p) => p.type === 'group')?.value ?? ',', decimal: parts.find((p) => p.type === 'decimal')?.value ?? '.' };
}

/**
 * A decimal as the API gave it (a string or a JSON number), grouped in the language: every digit
 * kept, nothing rounded (the integer part goes through Intl as a BigInt, exactly).
 */
export function formatDecimal(text: string, lang: FormatLang): string {
  const match = /^\s*([-+]?)(\d+)(?:\.(\d+))?\s*$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction] = match;
  const { decimal } = separators(lang);
  const grouped = new Intl.NumberFormat(localeOf(lang)).format(BigInt(whole!));
  return `${sign === '-' ? '-' : ''}${grouped}${fraction ? `${decimal}${fraction}` : ''}`;
}

/** The sign a language writes after an amount of a currency: "₽" in Russian, the code in English; USDT and other non-ISO codes as they are. */
export function currencySign(currency: string, lang: FormatLang): string {
  if (lang === 'en') return currency;
  try {
    const sign = new Intl.NumberFormat(localeOf(lang), { style: 'currency', currency, currencyDisplay: 'narrowSymbol' })
      .formatToParts(0)
      .find((p) => p.type === 'currency')?.value;
    // Only a real symbol ("₽", "₸", "$"): a code Intl merely repeats stays as it was.
    return sign && !/^[A-Z]{3}$/.test(sign) ? sign : currency;
  } catch {
    return currency;
  }
}

/** An amount with its currency, as a person reads it: "1 500 ₽" / "1,500 RUB"; every digit the API gave. */
export function formatMoney(value: number | string | null | undefined, currency: string | undefined, lang: FormatLang): string {
  if (value === null || value === undefined || value === '') return '—';
  const amount = formatDecimal(String(value), lang);
  return currency ? `${amount}\u00a0${currencySign(currency, lang)}` : amount;
}

/**
 * A card or account number grouped in fours, masked digits included: "2200 **** **** 1234",
 * "2200 7001 2345 6789". A phone number (+7…) or anything with letters is left as it is.
 */
export function groupCard(value: string | null | undefined): string {
  if (!value) return '';
  const compact = value.replace(/[\s-]/g, '');
  if (!/^[\d*•xX]{12,19}$/.test(compact)) return value;
  return compact.replace(/(.{4})(?=.)/g, '$1 ');
}
