import { Decimal } from 'decimal.js';

// 40 significant digits and half-up rounding: far beyond numeric(38, 6), so no intermediate
// result of the service's formulas is ever rounded by the library behind our back.
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Money = Decimal;

export const USDT_DECIMALS = 6;
export const RATE_DECIMALS = 8;

/** ISO 4217 minor units of the currencies Kassir handles (VND has none). */
const MINOR_UNITS: Record<string, number> = {
  RUB: 2,
  KZT: 2,
  AZN: 2,
  TJS: 2,
  UZS: 2,
  KGS: 2,
  AMD: 2,
  GEL: 2,
  VND: 0,
  USDT: 6,
};

/** The currencies Kassir prices in USDT (order currencies and the requisites' local ones). */
export const FIAT_CURRENCIES: readonly string[] = Object.keys(MINOR_UNITS).filter((code) => code !== 'USDT');

export function minorUnits(currency: string): number {
  return MINOR_UNITS[currency] ?? 2;
}

/** The table of minorUnits as JSON, for SQL that checks an amount against a currency itself (2 for one not in it, as here). */
export const MINOR_UNITS_JSON = JSON.stringify(MINOR_UNITS);

/** A decimal from a database numeric (string) or a validated JSON number. */
export function money(value: string | number | Decimal): Decimal {
  return new Money(typeof value === 'number' ? String(value) : value);
}

/**
 * Reads a JSON number as an exact decimal. JSON numbers arrive as binary floats; their shortest
 * round-trip text (`String(n)`) is the literal the client sent for every amount with up to 15
 * significant digits, so the decimal is exact. Returns undefined for non-finite or non-numbers.
 */
function decimalFromJson(value: unknown): Decimal | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return new Money(String(value));
}

/** Rounds to the currency's minor unit, half up. */
export function roundTo(value: Decimal, currency: string): Decimal {
  return value.toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_UP);
}

/** A numeric string as a JSON number for responses (the spec shows amounts as numbers). */
export function toNumber(value: string | Decimal | null): number | null {
  if (value === null) return null;
  return Number(typeof value === 'string' ? value : value.toString());
}

export interface DecimalRule {
  /** Field name for the error message. */
  field: string;
  /** Most decimal places allowed. */
  places: number;
  min?: Decimal | number | string;
  minExclusive?: boolean;
  max?: Decimal | number | string;
  maxExclusive?: boolean;
}

/**
 * Validates a JSON number as a decimal under `rule`; returns the decimal or a sentence for the
 * client naming the field and the bound it broke.
 */
export function checkDecimal(value: unknown, rule: DecimalRule): Decimal | string {
  const d = decimalFromJson(value);
  if (!d) return `${rule.field} must be a number`;
  if (d.decimalPlaces() > rule.places) return `${rule.field} must have at most ${rule.places} decimal places`;
  if (rule.min !== undefined) {
    const min = new Money(rule.min);
    if (rule.minExclusive ? d.lte(min) : d.lt(min)) return `${rule.field} must be ${rule.minExclusive ? 'greater than' : 'at least'} ${min.toFixed()}`;
  }
  if (rule.max !== undefined) {
    const max = new Money(rule.max);
    if (rule.maxExclusive ? d.gte(max) : d.gt(max)) return `${rule.field} must be ${rule.maxExclusive ? 'less than' : 'at most'} ${max.toFixed()}`;
  }
  return d;
}
