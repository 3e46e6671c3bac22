/**
 * The spec's payment methods, order currencies and countries, in one place (spec
 * "POST /v1/payments": "Methods by currency" and "Cross-border rules").
 */

export const METHODS = ['CARD', 'SBP', 'SBP_QR', 'PHONE', 'SIM', 'CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER_SIM', 'VIET_QR'] as const;
export type Method = (typeof METHODS)[number];

export const REQUISITE_TYPES = ['card', 'sbp', 'phone', 'sim', 'qr'] as const;
export type RequisiteType = (typeof REQUISITE_TYPES)[number];

export const ORDER_CURRENCIES = ['RUB', 'KZT', 'AZN', 'TJS'] as const;
export type OrderCurrency = (typeof ORDER_CURRENCIES)[number];

/** Which requisite types serve a method. Cross-border rule 1: card or phone; sim for _SIM. */
export const METHOD_TYPES: Record<Method, RequisiteType[]> = {
  CARD: ['card'],
  SBP: ['sbp'],
  SBP_QR: ['qr'],
  PHONE: ['phone'],
  SIM: ['sim'],
  CROSS_BORDER: ['card', 'phone'],
  CROSS_BORDER_CARD: ['card', 'phone'],
  CROSS_BORDER_SIM: ['sim'],
  VIET_QR: ['qr'],
};

/** Methods whose requisites are abroad and whose payer pays `requisites.amount_local`. */
export const CROSS_BORDER_METHODS: ReadonlySet<Method> = new Set(['CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER_SIM', 'VIET_QR']);

/**
 * Methods by order currency. The spec's table lists RUB's domestic methods and the cross-border
 * ones for KZT and TJS; its cross-border rules 2 and 4 describe ruble orders converted abroad, so
 * RUB also takes the cross-border methods. VIET_QR (a QR requisite in Vietnam) is a cross-border
 * method for ruble orders.
 */
export const METHODS_BY_CURRENCY: Record<OrderCurrency, Method[]> = {
  RUB: ['CARD', 'SBP', 'SBP_QR', 'SIM', 'CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER_SIM', 'VIET_QR'],
  KZT: ['CARD', 'PHONE', 'CROSS_BORDER', 'CROSS_BORDER_CARD'],
  AZN: ['CARD', 'PHONE'],
  TJS: ['CARD', 'CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER_SIM'],
};

/** The currency paid into requisites of each supported country. */
export const COUNTRY_CURRENCY: Record<string, string> = {
  RU: 'RUB',
  KZ: 'KZT',
  TJ: 'TJS',
  UZ: 'UZS',
  KG: 'KGS',
  AZ: 'AZN',
  AM: 'AMD',
  GE: 'GEL',
  VN: 'VND',
};

/** The home country of each order currency: where its domestic methods' requisites are. */
export const CURRENCY_COUNTRY: Record<OrderCurrency, string> = { RUB: 'RU', KZT: 'KZ', AZN: 'AZ', TJS: 'TJ' };

export function isMethod(value: string): value is Method {
  return (METHODS as readonly string[]).includes(value);
}

export function isOrderCurrency(value: string): value is OrderCurrency {
  return (ORDER_CURRENCIES as readonly string[]).includes(value);
}
