/**
 * Argument parsers and what options become: numbers go to the API as JSON numbers, checked as text
 * first; given options copied into a body or a query string under their API names.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { CliError, type Json, type JsonObject } from './session.js';

/**
 * A decimal written in plain notation. The text is checked before Number() so that "12abc", "1e3",
 * "0x10" or "" are refused instead of silently becoming something else; beyond 15 significant
 * digits a JSON number no longer carries the exact value the operator typed, so that is refused too.
 */
function decimalArg(signed: boolean) {
  return (text: string): number => {
    const pattern = signed ? /^[+-]?\d+(\.\d+)?$/ : /^\d+(\.\d+)?$/;
    if (!pattern.test(text)) {
      throw new InvalidArgumentError(`"${text}" is not a ${signed ? 'signed ' : ''}decimal number (write it like ${signed ? '-12.5' : '12.5'}).`);
    }
    const digits = text.replace(/^[+-]/, '').replace('.', '').replace(/^0+/, '');
    if (digits.length > 15) throw new InvalidArgumentError(`"${text}" has more than 15 significant digits.`);
    return Number(text);
  };
}
export const decimal = decimalArg(false);

export const signedDecimal = decimalArg(true);

export function integer(text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new InvalidArgumentError(`"${text}" is not a non-negative whole number.`);
  return Number(text);
}

export function bool(text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new InvalidArgumentError(`"${text}" must be true or false.`);
}

/**
 * `--max none` lifts a requisite's upper limit. The parser keeps the word (commander turns a parser's
 * null into ''); the command sends it as null.
 */
export function decimalOrNone(text: string): number | 'none' {
  return text === 'none' ? 'none' : decimal(text);
}

function integerOrNone(text: string): number | 'none' {
  return text === 'none' ? 'none' : integer(text);
}

export function signedInteger(text: string): number {
  if (!/^-?\d{1,7}$/.test(text)) throw new InvalidArgumentError(`"${text}" is not a whole number, e.g. 10 or -5.`);
  return Number(text);
}

/** The limit options shared by requisite add/update (own limits) and executor update (defaults, `prefix` default_). */
const LIMIT_OPTIONS = [
  [
    'daily-turnover-limit',
    'dailyTurnoverLimit',
    'daily_turnover_limit',
    '<amount|none>',
    'most handed out in a UTC day, in the requisite currency',
    decimalOrNone,
  ],
  [
    'monthly-turnover-limit',
    'monthlyTurnoverLimit',
    'monthly_turnover_limit',
    '<amount|none>',
    'most handed out in a UTC month, in the requisite currency',
    decimalOrNone,
  ],
  ['daily-count-limit', 'dailyCountLimit', 'daily_count_limit', '<n|none>', 'most hand-outs in a UTC day', integerOrNone],
  ['monthly-count-limit', 'monthlyCountLimit', 'monthly_count_limit', '<n|none>', 'most hand-outs in a UTC month', integerOrNone],
] as const;

/** Adds the limit options to `command`; pending hand-outs count, `none` removes the limit. */
export function withLimitOptions(command: Command, scope: string): Command {
  for (const [flag, , , value, description, parse] of LIMIT_OPTIONS) {
    command.option(`--${flag} ${value}`, `${description} (${scope}); none removes it`, parse);
  }
  return command;
}

/** The limit options given, under their API names (`prefix` + name), `none` sent as null. */
export function limitBody(options: Record<string, unknown>, prefix = ''): JsonObject {
  const body: JsonObject = {};
  for (const [, option, field] of LIMIT_OPTIONS) {
    const value = options[option];
    if (value !== undefined) body[prefix + field] = value === 'none' ? null : (value as number);
  }
  return body;
}

export function methodList(text: string): string[] {
  const methods = text
    .split(',')
    .map((m) => m.trim().toUpperCase())
    .filter(Boolean);
  if (methods.length === 0) throw new InvalidArgumentError('give at least one method, e.g. CARD,SBP.');
  return methods;
}

export const upper = (text: string) => text.toUpperCase();

/** Copies the options that were given into an API body under their API names. */
export function pick(options: Record<string, unknown>, names: Record<string, string>): JsonObject {
  const body: JsonObject = {};
  for (const [option, field] of Object.entries(names)) {
    if (options[option] !== undefined) body[field] = options[option] as Json;
  }
  return body;
}

export function requireChanges(body: JsonObject, flags: string): JsonObject {
  if (Object.keys(body).length === 0) throw new CliError(`nothing to update: pass at least one of ${flags}`);
  return body;
}

/** `?key=value&…` from the filters that were given, or nothing. */
export function queryString(filters: JsonObject): string {
  const query = new URLSearchParams(Object.entries(filters).map(([key, value]) => [key, String(value)])).toString();
  return query ? `?${query}` : '';
}

/** `?limit=…&offset=…` from the list options given, or nothing. */
export function page(options: { limit?: number; offset?: number }): string {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.offset !== undefined) query.set('offset', String(options.offset));
  return query.size > 0 ? `?${query}` : '';
}
