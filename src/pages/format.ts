/**
 * How amounts, card numbers and phone numbers read on the payment page. Amounts arrive as the
 * database's decimal strings and are formatted as text: never through a binary float.
 */
import type { Lang } from './i18n.js';

const SYMBOLS: Record<string, string> = { RUB: '₽' };
const NBSP = '\u00a0';

interface AmountParts {
  /** Grouped for reading: `1 500,50 ₽` / `1,500.50 ₽`. */
  text: string;
  /** What a banking app's amount field takes: `1500,50` / `1500.50`, `1500` for whole amounts. */
  copy: string;
}

/** `"1500.00"`, `"RUB"` → `1 500 ₽`; kopecks are shown only when there are any. */
export function formatAmount(value: string, currency: string, lang: Lang): AmountParts {
  const negative = value.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? value.slice(1) : value).split('.');
  const cents = /[1-9]/.test(fraction) ? fraction.padEnd(2, '0').replace(/(\d{2,}?)0+$/, '$1') : '';
  const decimal = lang === 'ru' ? ',' : '.';
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, lang === 'ru' ? NBSP : ',');
  const sign = negative ? '-' : '';
  const number = sign + grouped + (cents ? decimal + cents : '');
  return {
    text: `${number}${NBSP}${SYMBOLS[currency] ?? currency}`,
    copy: sign + whole + (cents ? decimal + cents : ''),
  };
}

/** `2200123456789012` → `2200 1234 5678 9012` (19-digit cards end in a group of three). */
export function groupCard(value: string): string {
  return value.replace(/\D/g, '').replace(/(\d{4})(?=\d)/g, '$1 ');
}

// National formats, X = a digit, for the countries the service has requisites in.
const PHONE_FORMATS: Array<[country: string, pattern: string]> = [
  ['7', '+7 XXX XXX-XX-XX'],
  ['992', '+992 XX XXX XXXX'],
  ['998', '+998 XX XXX-XX-XX'],
  ['996', '+996 XXX XXX XXX'],
  ['994', '+994 XX XXX-XX-XX'],
  ['374', '+374 XX XXX XXX'],
  ['995', '+995 XXX XXX XXX'],
  ['84', '+84 XX XXX XXXX'],
];

/** `+79123456789` → `+7 912 345-67-89`; an unknown shape is shown as `+digits`. */
export function formatPhone(value: string): string {
  const digits = value.replace(/\D/g, '');
  for (const [country, pattern] of PHONE_FORMATS) {
    const slots = pattern.split('X').length - 1;
    if (digits.startsWith(country) && digits.length === country.length + slots) {
      let at = country.length;
      return pattern.replace(/X/g, () => digits[at++]!);
    }
  }
  return `+${digits}`;
}

/** The number to paste into a banking app: `+` and digits only. */
export function phoneForCopy(value: string): string {
  return `+${value.replace(/\D/g, '')}`;
}

/** A country's name in the page's language (`TJ` → `Таджикистан` / `Tajikistan`). */
export function countryName(code: string, lang: Lang): string {
  try {
    return new Intl.DisplayNames([lang], { type: 'region' }).of(code) ?? code;
  } catch {
    return code;
  }
}

/** `mm:ss` (or `h:mm:ss`) left until a deadline; `0:00` once it has passed. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}
