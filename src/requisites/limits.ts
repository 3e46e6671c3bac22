import { DomainError } from '../errors.js';
import { checkDecimal } from '../lib/money.js';

// The validation of hand-out limits, shared by a requisite's own and its executor's defaults (migration 019).

/** A turnover limit (2 decimals, ≥ 0) or null. */
export function turnoverLimit(value: number | null | undefined, field: string): string | null {
  if (value === undefined || value === null) return null;
  const checked = checkDecimal(value, { field, places: 2, min: 0, max: '1e17', maxExclusive: true });
  if (typeof checked === 'string') throw new DomainError('VALIDATION', checked, { field, [field]: value });
  return checked.toFixed();
}

/** A count limit (a whole number ≥ 0) or null. */
export function countLimit(value: number | null | undefined, field: string): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < 0 || value > 2_000_000_000) {
    throw new DomainError('VALIDATION', `${field} must be a whole number of hand-outs from 0 to 2000000000, or null for no limit`, { field, [field]: value });
  }
  return value;
}
