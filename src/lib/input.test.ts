import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputProblem, MAX_NUMBER, parseJson, textProblem } from './input.js';
import { money } from './money.js';

function problemOf(text: string): string | undefined {
  try {
    parseJson(text);
    return undefined;
  } catch (err) {
    if (err instanceof InputProblem) return err.message;
    throw err;
  }
}

describe('textProblem', () => {
  it.each([
    ['a\u0000b', 'must not contain control characters (U+0000 at position 1)'],
    ['\u0007', 'must not contain control characters (U+0007 at position 0)'],
    ['x\u007F', 'must not contain control characters (U+007F at position 1)'],
    ['\u0085', 'must not contain control characters (U+0085 at position 0)'],
    ['\ud800', 'must be valid Unicode text (it holds an unpaired surrogate)'],
    ['a\udc00', 'must be valid Unicode text (it holds an unpaired surrogate)'],
  ])('refuses %j', (value, problem) => {
    expect(textProblem(value)).toBe(problem);
  });

  it('takes several lines in a body, never in a query or a path', () => {
    expect(textProblem('line 1\nline 2\r\n\ttab')).toBeUndefined();
    expect(textProblem('line 1\nline 2', false)).toMatch(/U\+000A/);
  });

  it('takes any well-formed text without controls: Cyrillic, emoji, no-break spaces', () => {
    expect(textProblem('Поступление 1\u00A0500 ₽ 😀 ИВАН И.')).toBeUndefined();
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (value) => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the test strips exactly the characters the check refuses
        const clean = value.replace(/[\u0000-\u001F\u007F-\u009F]/g, '');
        expect(textProblem(clean, false)).toBeUndefined();
      }),
    );
  });
});

describe('parseJson', () => {
  it('reads JSON as JSON.parse does when it breaks no rule', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        const text = JSON.stringify(value);
        let expected: unknown;
        try {
          // As JSON.parse reads it, less the __proto__ and constructor keys parseJson drops (tested below).
          expected = JSON.parse(text, (key, v) => (key === '__proto__' || key === 'constructor' ? undefined : v));
        } catch {
          return;
        }
        const problem = problemOf(text);
        if (problem) {
          // Only for what the rules refuse: a control character, a huge number, -0 aside.
          expect(problem).toMatch(/control characters|unpaired surrogate|10\^15|cannot be carried exactly/);
          return;
        }
        expect(parseJson(text)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('carries every amount of up to 15 significant digits exactly into a decimal', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 999_999_999_999_999n }), fc.integer({ min: 0, max: 14 }), (digits, places) => {
        const literal = new Decimal(digits.toString()).div(new Decimal(10).pow(places)).toFixed();
        const parsed = parseJson(`{"amount": ${literal}}`) as { amount: number };
        expect(money(parsed.amount).eq(literal)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['9007199254740993', 'amount must be less than 10^15 in size'],
    ['1e400', 'amount must be less than 10^15 in size'],
    ['1000000000000000', 'amount must be less than 10^15 in size'],
    ['-1e15', 'amount must be less than 10^15 in size'],
    [
      '0.1000000000000000055511151231257827',
      'amount 0.1000000000000000055511151231257827 cannot be carried exactly by a JSON number; send at most 15 significant digits',
    ],
    ['100.00000000000000001', 'amount 100.00000000000000001 cannot be carried exactly by a JSON number; send at most 15 significant digits'],
    ['1e-400', 'amount 1e-400 cannot be carried exactly by a JSON number; send at most 15 significant digits'],
  ])('refuses the number %s, naming the field', (literal, problem) => {
    expect(problemOf(`{"amount": ${literal}}`)).toBe(problem);
  });

  it('takes numbers just under the bound and short decimals exactly', () => {
    expect(parseJson('{"a": 999999999999999, "b": 0.1, "c": 1500.50, "d": 1e2, "e": -0.000001}')).toEqual({
      a: 999999999999999,
      b: 0.1,
      c: 1500.5,
      d: 100,
      e: -0.000001,
    });
    expect(MAX_NUMBER).toBe(1e15);
  });

  it.each([
    ['{"ext_id": "a\\u0000b"}', 'ext_id must not contain control characters (U+0000 at position 1)'],
    ['{"routes": [{"currencies": ["RUB", "\\ud800"]}]}', 'routes.0.currencies.1 must be valid Unicode text (it holds an unpaired surrogate)'],
    ['{"a\\u0000": 1}', 'A key of the body must not contain control characters (U+0000 at position 1)'],
    ['"\\u0007"', 'the body must not contain control characters (U+0007 at position 0)'],
    ['{"amount": 1, "amount": 2}', 'The body names the key "amount" twice'],
    ['[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]', 'The body is nested deeper than 16 levels'],
    ['['.repeat(100_000), 'The body is nested deeper than 16 levels'],
    ['{"a": 1', 'The request body is not valid JSON'],
    ['NaN', 'The request body is not valid JSON'],
  ])('refuses %s', (text, problem) => {
    expect(problemOf(text)).toBe(problem);
  });

  it('keeps several lines in a string, and repeats of a key with the same value', () => {
    expect(parseJson('{"text": "Перевод\\n+1 500 ₽", "a": 1, "a": 1}')).toEqual({ text: 'Перевод\n+1 500 ₽', a: 1 });
  });

  it('drops __proto__ and constructor keys: a body never reaches a prototype', () => {
    const parsed = parseJson('{"__proto__": {"isAdmin": true}, "constructor": {"prototype": {"x": 1}}, "ok": 1}') as Record<string, unknown>;
    expect(parsed).toEqual({ ok: 1 });
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });
});
