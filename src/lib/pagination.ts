import { DomainError, type ErrorKey } from '../errors.js';

/** DESIGN.md decision 8: `limit` defaults to 100, capped at 1000; larger or non-numeric is 400. */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export function parseListQuery(query: Record<string, unknown>, code: ErrorKey): { limit: number; offset: number } {
  const limit = integerParam(query.limit, 'limit', DEFAULT_LIMIT, code);
  const offset = integerParam(query.offset, 'offset', 0, code);
  if (limit < 1 || limit > MAX_LIMIT) throw new DomainError(code, `limit must be between 1 and ${MAX_LIMIT}`, { limit });
  return { limit, offset };
}

function integerParam(value: unknown, name: string, fallback: number, code: ErrorKey): number {
  if (value === undefined || value === '') return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{1,9}$/.test(value)) return Number(value);
  throw new DomainError(code, `${name} must be a non-negative integer`, { [name]: value });
}
