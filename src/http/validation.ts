import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// Bodies are validated without type coercion: `"amount": "100"` is a string, not a number, and
// the client is told so. Query strings and path parameters are text by nature and are coerced.
function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: true,
    allErrors: false,
    strict: false,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** Turns ajv's first error into a sentence naming the field: `amount must be a number`. */
export function describeValidationError(errors: ErrorObject[] | undefined, part: string | undefined): string {
  const first = errors?.[0];
  if (!first) return 'Invalid parameters';
  const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const where = part === 'querystring' ? 'query parameter ' : part === 'params' ? 'path parameter ' : '';
  switch (first.keyword) {
    case 'required':
      return `${(first.params as { missingProperty: string }).missingProperty} is required`;
    case 'type':
      return `${where}${path || part || 'body'} must be ${article((first.params as { type: string }).type)}`;
    case 'enum':
      return `${where}${path} must be one of: ${(first.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    case 'maxLength':
      return `${where}${path} must be at most ${(first.params as { limit: number }).limit} characters`;
    case 'minLength':
      return `${where}${path} must not be empty`;
    case 'format':
      return `${where}${path} must be a valid ${(first.params as { format: string }).format}`;
    default:
      return `${where}${path || part || 'body'} ${first.message ?? 'is invalid'}`;
  }
}

function article(type: string): string {
  if (type === 'object') return 'a JSON object';
  if (type === 'array') return 'an array';
  if (type === 'integer') return 'an integer';
  return `a ${type}`;
}
