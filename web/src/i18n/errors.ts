import { ApiError } from '../api/client';
import type { MessageKey } from './index';
import { parseValidation } from './validation';

/**
 * The API's errors in the person's language: the spec's error body (`{error, message, data}`,
 * src/errors.ts) read by its code, and a validation error's field and rule read from its message
 * (src/http/validation.ts writes "amount must be a number", "email is required", …) so that the
 * screen says it in its own words, on the field it concerns. The one place that knows this;
 * ErrorAlert and the forms (fieldError) use it.
 */
export interface DescribedError {
  /** What went wrong, in one line: the code's own text. */
  title: string;
  /** The detail: the field and the rule in the person's words, or the server's sentence when nothing here knows it better. */
  message: string;
  /** The request field it concerns (`amount`, `email`), when the error names one. */
  field?: string;
}

type T = (key: MessageKey, values?: Record<string, string | number>) => string;
type Has = (key: string) => key is MessageKey;

/** Codes that say the request's input was refused: their message names a field and a rule. */
const INVALID = new Set(['VALIDATION', 'PAY_002', 'WDR_001', 'TRF_001']);

/** A field's name as the screen calls it ("amount" → "Сумма"); one not listed, as the API names it. */
export function fieldName(field: string, t: T, has: Has): string {
  const key = `field.${field}`;
  return has(key) ? t(key) : field;
}

/** Any error a screen shows (an ApiError from the client, a failed fetch, anything thrown), described in the person's language. */
export function describeError(error: unknown, t: T, has: Has, lang: string): DescribedError {
  if (!(error instanceof ApiError)) {
    return { title: t('error.generic'), message: error instanceof Error ? error.message : String(error) };
  }
  const code = error.code === 'PAY_001' && error.status === 404 ? 'PAYOUT_NOT_FOUND' : error.code;
  const codeKey = `error.code.${code}`;
  const title = has(codeKey) ? t(codeKey) : error.status >= 500 ? t('error.server') : t('error.generic');
  if (INVALID.has(error.code)) {
    const parsed = parseValidation(error.message);
    if (parsed) {
      const ruleKey = `error.rule.${parsed.rule}`;
      const name = fieldName(parsed.field, t, has);
      const text = has(ruleKey) ? t(ruleKey, { field: name, ...parsed.values }) : error.message;
      return { title, message: text, field: parsed.field };
    }
  }
  // 5xx bodies are generic by design (the detail is in the log under the request id).
  if (error.status >= 500) return { title, message: t('error.serverHint') };
  // The server's sentence is English: in another language, the code's own advice when there is one.
  const hintKey = `error.hint.${code}`;
  if (lang !== 'en' && has(hintKey)) return { title, message: t(hintKey) };
  return { title, message: error.message };
}

/** The text to show ON a form field: the error's detail when it concerns `field` (one of the names given), nothing otherwise. */
export function fieldErrorOf(error: unknown, fields: string | string[], t: T, has: Has, lang: string): string | undefined {
  if (!error) return undefined;
  const described = describeError(error, t, has, lang);
  const names = Array.isArray(fields) ? fields : [fields];
  return described.field && names.includes(described.field) ? described.message : undefined;
}
