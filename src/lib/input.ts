import { isSafeNumber, parse as parseLossless } from 'lossless-json';

/**
 * The one place where text and numbers from outside are judged before anything reads them: JSON
 * bodies (every API), multipart fields and `data` parts, query strings, path parameters, headers
 * that are stored, and upstream providers' answers. Whatever passes here can reach SQL and decimal
 * arithmetic safely:
 *
 * - no control characters (PostgreSQL refuses NUL in text, and the others only hide what a person
 *   reading a log or the console sees); tab, line feed and carriage return are allowed in bodies,
 *   where a bank notification or a comment has several lines, never in a query or a path;
 * - well-formed Unicode: an unpaired surrogate would be stored as U+FFFD, silently changing an
 *   `ext_id` the merchant then cannot find;
 * - numbers exactly as sent: a JSON number is read by `String(n)` into a decimal, which is exact only
 *   when the binary float carries the digits that were written (9007199254740993 arrives as
 *   9007199254740992; 0.1000000000000000055 as 0.1), and no number is too large for any amount,
 *   rate or count this service keeps;
 * - no duplicate keys (which of two `amount`s is meant?) and no nesting deeper than any API takes.
 */

/** Larger than any amount, rate or count an API takes: refused before it reaches arithmetic. */
export const MAX_NUMBER = 1e15;
/** Deeper than any request body of any API. */
const MAX_DEPTH = 16;

/** C0 controls but tab, LF and CR; DEL; C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this check's purpose
const CONTROL_IN_BODY = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
/** Every control character: a query string or a path parameter is one line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this check's purpose
const CONTROL_IN_LINE = /[\u0000-\u001F\u007F-\u009F]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `value` cannot be taken as text (`multiline`: tab, LF and CR are allowed), or undefined. */
export function textProblem(value: string, multiline = true): string | undefined {
  const control = (multiline ? CONTROL_IN_BODY : CONTROL_IN_LINE).exec(value);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return `must not contain control characters (U+${code} at position ${control.index})`;
  }
  if (UNPAIRED_SURROGATE.test(value)) return 'must be valid Unicode text (it holds an unpaired surrogate)';
  return undefined;
}

/** A JSON body that cannot be taken, with a sentence naming the field for the client. */
export class InputProblem extends Error {}

/** A JSON number literal that cannot be taken: too large, or not carried exactly by a binary float. */
class RefusedNumber {
  constructor(
    readonly literal: string,
    readonly tooLarge: boolean,
  ) {}
}

function parseNumber(literal: string): number | RefusedNumber {
  const value = Number(literal);
  if (!(Math.abs(value) < MAX_NUMBER)) return new RefusedNumber(literal, true);
  return isSafeNumber(literal) ? value : new RefusedNumber(literal, false);
}

function describe(path: string): string {
  return path === '' ? 'the body' : path;
}

/**
 * Parses JSON text into plain values under the rules above; throws InputProblem with a sentence
 * for the client (naming the field: `amount`, `routes.0.currencies.1`) when it cannot be taken,
 * including when it is not JSON at all. Keys `__proto__` and `constructor` are dropped, so that a
 * body never reaches an object's prototype.
 */
export function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = parseLossless(text, null, parseNumber);
  } catch (err) {
    // lossless-json refuses duplicate keys with different values, and recursion this deep.
    const duplicate = /^Duplicate key '(.*)' encountered/.exec((err as Error).message);
    if (duplicate) throw new InputProblem(`The body names the key "${duplicate[1]}" twice`);
    if (err instanceof RangeError) throw new InputProblem(`The body is nested deeper than ${MAX_DEPTH} levels`);
    throw new InputProblem('The request body is not valid JSON');
  }
  return check(value, '', 0);
}

function check(value: unknown, path: string, depth: number): unknown {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    if (problem) throw new InputProblem(`${describe(path)} ${problem}`);
    return value;
  }
  if (value instanceof RefusedNumber) {
    if (value.tooLarge) throw new InputProblem(`${describe(path)} must be less than 10^15 in size`);
    const literal = value.literal.length > 40 ? `${value.literal.slice(0, 40)}…` : value.literal;
    throw new InputProblem(`${describe(path)} ${literal} cannot be carried exactly by a JSON number; send at most 15 significant digits`);
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) throw new InputProblem(`The body is nested deeper than ${MAX_DEPTH} levels`);
  const prefix = path === '' ? '' : `${path}.`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = check(value[i], `${prefix}${i}`, depth + 1);
    return value;
  }
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (key === '__proto__' || key === 'constructor') {
      delete object[key];
      continue;
    }
    const keyProblem = textProblem(key, false);
    if (keyProblem) throw new InputProblem(`A key of ${describe(path)} ${keyProblem}`);
    object[key] = check(object[key], `${prefix}${key}`, depth + 1);
  }
  return object;
}
