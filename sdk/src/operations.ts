/** An endpoint of the merchant API, as the SDK calls it. */
export interface Operation {
  method: 'GET' | 'POST';
  /** OpenAPI-style template; each `{name}` is filled from the SDK method's parameter of that name. */
  path: string;
  /** False only for the public bank directory: every other call carries X-Identity and X-Signature. */
  signed: boolean;
}

/**
 * Every endpoint of the merchant API, keyed by the SDK method that calls it (`payments.create` is
 * `kassir.payments.create(…)`). The client builds its URLs from these entries, and
 * scripts/check-openapi.ts proves that they are exactly the service's `/v1` operations and that each
 * method's path parameters, body, query and answer types match the OpenAPI schemas.
 */
export const OPERATIONS = {
  'payments.create': { method: 'POST', path: '/v1/payments', signed: true },
  'payments.get': { method: 'GET', path: '/v1/payments/{id}', signed: true },
  'payments.getByExtId': { method: 'GET', path: '/v1/payments/by-ext-id/{extId}', signed: true },
  'payments.confirm': { method: 'POST', path: '/v1/payments/{id}/confirm', signed: true },
  'payments.attachReceipt': { method: 'POST', path: '/v1/payments/{id}/receipt', signed: true },
  'payments.openDispute': { method: 'POST', path: '/v1/payments/{id}/dispute', signed: true },
  'payments.cancelDispute': { method: 'POST', path: '/v1/payments/{id}/dispute/cancel', signed: true },
  'receipts.download': { method: 'GET', path: '/v1/receipts/{id}', signed: true },
  'payouts.create': { method: 'POST', path: '/v1/payouts', signed: true },
  'payouts.get': { method: 'GET', path: '/v1/payouts/{id}', signed: true },
  'payouts.getByExtId': { method: 'GET', path: '/v1/payouts/by-ext-id/{extId}', signed: true },
  'payouts.list': { method: 'GET', path: '/v1/payouts', signed: true },
  'withdrawals.create': { method: 'POST', path: '/v1/withdrawals', signed: true },
  'withdrawals.get': { method: 'GET', path: '/v1/withdrawals/{id}', signed: true },
  'withdrawals.list': { method: 'GET', path: '/v1/withdrawals', signed: true },
  'withdrawals.fee': { method: 'GET', path: '/v1/withdrawals/fee', signed: true },
  'terminals.list': { method: 'GET', path: '/v1/terminals', signed: true },
  'balance.get': { method: 'GET', path: '/v1/balance', signed: true },
  'transfers.create': { method: 'POST', path: '/v1/transfers', signed: true },
  'banks.list': { method: 'GET', path: '/v1/public/banks', signed: false },
} as const satisfies Record<string, Operation>;

export type OperationName = keyof typeof OPERATIONS;
