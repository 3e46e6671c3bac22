import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileTemplate, HOLES, readNumber, readTemplate, TemplateError } from './forms.js';

describe('taught message forms: templates', () => {
  it('reads the amounts banks print', () => {
    expect(readNumber('1 500,50')).toBe('1500.50');
    expect(readNumber('1,500.00')).toBe('1500.00');
    expect(readNumber('1.500')).toBe('1500.00');
    expect(readNumber('1500')).toBe('1500.00');
    expect(readNumber('12.5')).toBe('12.50');
    expect(readNumber('17 588 751,96')).toBe('17588751.96');
  });

  it('matches the whole message, its literal text exactly (a person’s brackets and dots are text, never a pattern)', () => {
    const form = compileTemplate('Bank (X) {time}: +{amount} р. на *{card}.* от {payer}');
    expect(readTemplate(form, 'Bank (X) 10:05: +1 500,00 р. на *1234.* от Иван И.')).toEqual({ amount: '1500.00', digits: '1234', payer: 'Иван И.' });
    expect(readTemplate(form, 'Bank X 10:05: +1 500,00 р. на *1234.* от Иван И.')).toBeUndefined();
    expect(readTemplate(form, 'Bank (X) 10:05: +1 500,00 рX на *1234.* от Иван И.')).toBeUndefined();
    // Anchored: text before or after the form is not the form.
    expect(readTemplate(form, 'Отмена: Bank (X) 10:05: +1 500,00 р. на *1234.* от Иван И.')).toBeUndefined();
    // Case and spacing as the engine reads them.
    expect(readTemplate(form, 'BANK (x)  10:05:\u00a0+12 р. на *1234.* от Иван И.')).toMatchObject({ amount: '12.00' });
  });

  it('refuses what is no form', () => {
    const refused = (template: string) => () => compileTemplate(template);
    expect(refused('Зачисление 500 р')).toThrow(TemplateError);
    expect(refused('Зачисление {amount}{card}')).toThrow(/two holes/);
    expect(refused('Зачисление {amount} и {amount}')).toThrow(/more than once/);
    expect(refused('Зачисление {any} x {amount} x {any} x {any}')).toThrow(/more than twice/);
    expect(refused('Зачисление {any} {payer} {amount}')).toThrow(/words between them/);
    expect(refused('+{amount} р')).toThrow(/at least 5 letters/);
    expect(refused('Списание -{amount} р')).toThrow(/minus/);
    expect(refused('Зачисление {amount} {regex}')).toThrow(/not a hole/);
    expect(refused(`Зачисление {amount} ${'x'.repeat(1000)}`)).toThrow(/longer than/);
  });

  it('no template the rules allow takes long on any text (no catastrophic backtracking)', () => {
    const literal = fc.constantFrom(' ', ' от ', ': ', '. ', ' x ', 'Перевод ', ' р', '*', ' (', ') ');
    const templates = fc
      .array(fc.tuple(fc.constantFrom(...HOLES), literal), { minLength: 1, maxLength: 8 })
      .map((parts) => `Зачисление ${parts.map(([hole, text]) => `{${hole}}${text}`).join('')}`);
    const texts = fc.oneof(
      fc.stringMatching(/^[0-9 .,:*xот()р+-]{0,1000}$/),
      fc.constantFrom('Зачисление ', 'x ', '1 ', '* ', 'от ', '1,').map((unit) => `Зачисление ${unit.repeat(400)}`),
    );
    let slowest = 0;
    fc.assert(
      fc.property(templates, texts, (template, text) => {
        let compiled: ReturnType<typeof compileTemplate>;
        try {
          compiled = compileTemplate(template);
        } catch (err) {
          if (err instanceof TemplateError) return;
          throw err;
        }
        // The least of three runs: the first compiles the pattern, and a busy machine pauses any one run.
        let least = Number.POSITIVE_INFINITY;
        for (let run = 0; run < 3; run++) {
          const start = performance.now();
          readTemplate(compiled, text);
          least = Math.min(least, performance.now() - start);
        }
        slowest = Math.max(slowest, least);
      }),
      { numRuns: 400 },
    );
    expect(slowest).toBeLessThan(25);
  });
});
