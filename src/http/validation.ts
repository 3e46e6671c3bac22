import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { DomainError } from '../errors.js';
import { textProblem } from '../lib/input.js';
import { rejectInvalidJson } from './json.js';

/**
 * Bounds every route takes unless its schema says otherwise: no string without a length limit
 * nor an array without a size limit reaches a handler (the schemas name tighter ones where the
 * field has a natural size).
 */
export const DEFAULT_MAX_LENGTH = 2048;
export const DEFAULT_MAX_ITEMS = 100;

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
  return ajv.compile(withDefaultLimits(schema)) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** A copy of a JSON schema where every string and array without a limit has the default one. */
function withDefaultLimits(schema: unknown): object {
  if (Array.isArray(schema)) return schema.map(withDefaultLimits);
  if (schema === null || typeof schema !== 'object') return schema as object;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    // `properties` maps names to schemas; `enum`/`const`/`default` hold values, not schemas.
    copy[key] = key === 'enum' || key === 'const' || key === 'default' || key === 'examples' ? value : withDefaultLimits(value);
  }
  if (copy.type === 'string' && copy.maxLength === undefined && copy.enum === undefined && copy.const === undefined) copy.maxLength = DEFAULT_MAX_LENGTH;
  if (copy.type === 'array' && copy.maxItems === undefined) copy.maxItems = DEFAULT_MAX_ITEMS;
  return copy;
}

/**
 * Judges what every route receives besides its schema (src/lib/input.ts): a JSON body marked
 * unreadable by the parser, and query-string and path values with control characters or broken
 * Unicode. Installed on every route (app.ts) after the route's authentication and before its
 * schema, so an unauthenticated caller learns nothing and a handler never sees such input.
 */
export async function rejectUnreadableInput(request: FastifyRequest): Promise<void> {
  const code = request.routeOptions.config?.invalidCode ?? 'VALIDATION';
  rejectInvalidJson(request, code);
  for (const [part, values] of [
    ['query parameter', request.query],
    ['path parameter', request.params],
  ] as const) {
    if (!values || typeof values !== 'object') continue;
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      for (const item of Array.isArray(value) ? value : [value]) {
        const problem = typeof item === 'string' ? textProblem(item, false) : undefined;
        if (problem) throw new DomainError(code, `${part} ${name} ${problem}`);
      }
    }
  }
}

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
