/**
 * The field and the rule a validation message of the API names: src/http/validation.ts writes
 * "amount must be a number", "email is required", "query parameter status must be one of: …", and
 * services write "<field> must …" too. No imports, so that it is tested on its own
 * (test/console-format.test.ts); i18n/errors.ts turns what it finds into the person's words.
 */
const RULES: [RegExp, (m: RegExpExecArray) => { rule: string; values?: Record<string, string> }][] = [
  [/^(?:query parameter |path parameter )?([a-z][a-z0-9_.]*) is required$/, () => ({ rule: 'required' })],
  [/^([a-z][a-z0-9_.]*) is required$/, () => ({ rule: 'required' })],
  [
    /^(?:query parameter |path parameter )?([a-z][a-z0-9_.]*) must be (?:a|an) (number|integer|string|boolean|array|JSON object)$/,
    (m) => ({ rule: `type.${m[2]!.replace('JSON ', '')}` }),
  ],
  [/^(?:query parameter |path parameter )?([a-z][a-z0-9_.]*) must be one of: (.*)$/, (m) => ({ rule: 'oneOf', values: { allowed: m[2]! } })],
  [/^(?:query parameter |path parameter )?([a-z][a-z0-9_.]*) must be at most (\d+) characters$/, (m) => ({ rule: 'maxLength', values: { limit: m[2]! } })],
  [/^(?:query parameter |path parameter )?([a-z][a-z0-9_.]*) must not be empty$/, () => ({ rule: 'empty' })],
  [/^(?:query parameter |path parameter )?([a-z][a-z0-9_.]*) must be a valid (\S+)$/, (m) => ({ rule: 'format', values: { format: m[2]! } })],
  [/^([a-z][a-z0-9_.]*) must be (?:a )?positive.*$/, () => ({ rule: 'positive' })],
  [/^([a-z][a-z0-9_.]*) must not be zero.*$/, () => ({ rule: 'zero' })],
  [/^(?:query parameter |path parameter )?([a-z][a-z0-9_.]*) must match pattern .*$/, () => ({ rule: 'pattern' })],
  [/^([a-z][a-z0-9_.]*) (?:must|should|is|has) .*$/, () => ({ rule: 'invalid' })],
];

/** The field and the rule a validation message names, or nothing when it names none. */
export function parseValidation(message: string): { field: string; rule: string; values?: Record<string, string> } | undefined {
  for (const [pattern, read] of RULES) {
    const match = pattern.exec(message.trim());
    if (match) return { field: match[1]!, ...read(match) };
  }
  return undefined;
}
