export { Balances, Banks, KassirClient, Payments, Payouts, Receipts, Terminals, Transfers, Withdrawals } from './client.js';
export { KassirConnectionError, KassirError, type KassirErrorCode, KassirWebhookError } from './errors.js';
export type { KassirClientOptions, RequestOptions } from './http.js';
export { buildMultipart, type MultipartBody } from './multipart.js';
export { OPERATIONS, type Operation, type OperationName } from './operations.js';
export { signRequest } from './signing.js';
export type * from './types.js';
export {
  type PaymentWebhookEvent,
  type PayoutWebhookEvent,
  parseWebhook,
  verifyWebhookSignature,
  type WebhookEvent,
  type WebhookHeaders,
  type WebhookOptions,
} from './webhooks.js';
