/**
 * Request and response types of the Kassir merchant API (spec/merchant-api.md, "Resources and their
 * fields" and "Endpoints"). Field names and required-ness are checked against the service's OpenAPI
 * document by scripts/check-openapi.ts (run by the test suite), so these cannot drift from what the
 * service sends. Status, method and currency fields are narrowed to the values the spec and
 * DESIGN.md fix; on the wire they are strings.
 */

/** Currencies an order can be in (spec "POST /v1/payments"). */
export type OrderCurrency = 'RUB' | 'KZT' | 'AZN' | 'TJS';

/** Payment methods (spec "POST /v1/payments"); default CARD. */
export type PaymentMethod = 'CARD' | 'SBP' | 'SBP_QR' | 'PHONE' | 'SIM' | 'CROSS_BORDER' | 'CROSS_BORDER_CARD' | 'CROSS_BORDER_SIM' | 'VIET_QR';

/** Payment statuses (spec "States and transitions"). */
export type PaymentStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'COMPLETED_APPEAL' | 'CANCELLED' | 'CANCELLED_APPEAL' | 'DISPUTE';

/** Payout statuses (spec "Payout statuses"). */
export type PayoutStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';

/** Withdrawal statuses (spec "Withdrawal statuses"). */
export type WithdrawalStatus = 'pending' | 'processing' | 'completed' | 'failed';

/** Kinds of requisites a payer pays to. For `qr` the value is an EMV string. */
export type RequisitesType = 'sbp' | 'card' | 'phone' | 'sim' | 'qr';

/** Body of `POST /v1/payments`. */
export interface CreatePaymentParams {
  /** The merchant's unique order ID, at most 255 characters. */
  ext_id: string;
  /** Amount in the order currency; for RUB 100 to 300,000. */
  amount: number;
  /** Order currency; default: the terminal's currency. */
  currency?: OrderCurrency;
  /** Default CARD. */
  method?: PaymentMethod;
  /** Bank code filter (an operator code for CROSS_BORDER_SIM); see `banks.list()`. */
  bank?: string;
  /** ISO-2 country of the requisites (cross-border methods). */
  country?: string;
  /** The payer's ID in the merchant's system. */
  client_id?: string;
  /** Where Kassir sends this payment's webhooks. */
  notify_url?: string;
  /** Sent back in the `X-Notification-Token` header of every webhook of this payment. */
  notification_token?: string;
  /**
   * Kassir extension: the payer's name as the merchant knows it. A bank message naming another
   * payer flags the payment for the operator; the payment and the answer are unchanged.
   */
  payer_name?: string;
}

/** Where the payer sends the money (inside a payment). */
export interface Requisites {
  type: RequisitesType;
  /** Phone number, card number, subscriber number, or EMV string. */
  value: string;
  bank?: string;
  bank_code?: string;
  bank_name?: string;
  /** Recipient name, abbreviated. */
  holder: string;
  /** Cross-border: ISO-2 country. */
  country?: string;
  /** Cross-border: currency of the requisites. */
  currency?: string;
  /** Cross-border: what the payer pays in `requisites.currency`. */
  amount_local?: number;
}

/** The spec's Payment object. */
export interface Payment {
  id: string;
  ext_id: string;
  amount: number;
  currency: OrderCurrency;
  /** Price of 1 USDT in the order currency, fixed at creation. */
  rate: number;
  /** The merchant's pay-in rate for this deal, percent. */
  payin_rate: number;
  terminal_id: string;
  terminal_name: string;
  status: PaymentStatus;
  method: PaymentMethod;
  requisites: Requisites;
  /** The hosted payment page. */
  payment_url: string | null;
  valid_until: string;
  created_at: string;
  /** Present in the confirm response only. */
  message?: string;
  /** COMPLETED_APPEAL only: the amount actually received and credited. */
  received_amount?: number;
}

/**
 * A receipt file for confirm, receipt and dispute calls: png, jpg/jpeg, webp, heic or pdf, up to
 * 10 MB (the service judges the type by the bytes, not the name).
 */
export interface ReceiptFile {
  data: Uint8Array | ArrayBuffer | Blob;
  /** Default `receipt` plus an extension guessed from `contentType`. */
  filename?: string;
  /** Default: guessed from `filename`, else application/octet-stream. */
  contentType?: string;
}

/** `POST /v1/payments/{id}/confirm`: every field optional, an empty call is valid. */
export interface ConfirmPaymentInput {
  /** Sent as multipart/form-data when given (part `receipt`), else the call is JSON. */
  file?: ReceiptFile;
  /** A link to the receipt. */
  receipt_url?: string;
}

/** `POST /v1/payments/{id}/receipt`: a file, a link, or both; at least one. */
export interface AttachReceiptInput {
  file?: ReceiptFile;
  receipt_url?: string;
}

/** Answer of `POST /v1/payments/{id}/receipt`. */
export interface ReceiptAttached {
  id: string;
  ext_id: string;
  status: PaymentStatus;
  /** For an uploaded file, where the service keeps it (`receipts.download`); otherwise the merchant's own link. */
  receipt_url: string;
}

/** `POST /v1/payments/{id}/dispute` (spec table; every field optional). */
export interface OpenDisputeInput {
  /** The amount actually paid, when different. */
  amount?: number;
  receipt_url?: string;
  comment?: string;
  /** Sent as multipart/form-data (the fields above in the `data` part) when given. */
  file?: ReceiptFile;
}

/** The dispute object of the open-dispute answer. */
export interface Dispute {
  amount: number | null;
  receipt_url: string | null;
  comment: string | null;
  created_at: string;
}

/** Answer of `POST /v1/payments/{id}/dispute`; `status` is `dispute`, lower case, as the spec shows. */
export interface DisputeOpened {
  id: string;
  ext_id: string;
  amount: number;
  currency: OrderCurrency;
  status: 'dispute';
  method: PaymentMethod;
  dispute: Dispute;
  created_at: string;
}

/** Answer of `POST /v1/payments/{id}/dispute/cancel`. */
export interface DisputeCancelled {
  id: string;
  ext_id: string;
  status: 'cancelled_appeal';
}

/** A stored receipt file (`GET /v1/receipts/{id}`). */
export interface ReceiptDownload {
  contentType: string;
  /** From Content-Disposition, when the service names the file. */
  filename: string | undefined;
  data: Uint8Array;
}

/** Body of `POST /v1/payouts`. */
export interface CreatePayoutParams {
  /** The merchant's unique payout ID. */
  ext_id: string;
  /** Amount in RUB. */
  amount: number;
  method: 'card' | 'sbp';
  /** Card number (card) or phone number (sbp). */
  requisites: string;
  /** The recipient's full name. */
  holder_name: string;
  /** Recipient bank code; may be omitted for card payouts. */
  bank?: string;
  notify_url?: string;
}

/** The spec's Payout object. */
export interface Payout {
  id: string;
  ext_id: string;
  amount: number;
  currency: 'RUB';
  method: 'card' | 'sbp';
  requisites: string;
  holder_name: string;
  /** Bank code; empty string when none was given. */
  bank: string;
  status: PayoutStatus;
  created_at: string;
  /** Absent in the creation answer; null until the payout completes. */
  completed_at?: string | null;
}

/** Query of `GET /v1/payouts`. */
export interface ListPayoutsQuery {
  status?: PayoutStatus;
  /** Start (inclusive): an ISO 8601 date or timestamp, or a Date. */
  from?: string | Date;
  /** End (inclusive; a bare date covers the whole day, UTC). */
  to?: string | Date;
  /** Default 100, at most 1000. */
  limit?: number;
  offset?: number;
}

/** Answer of `GET /v1/payouts`. */
export interface PayoutList {
  payouts: Payout[];
  total: number;
  limit: number;
  offset: number;
}

/** Body of `POST /v1/withdrawals`. */
export interface CreateWithdrawalParams {
  terminal_id: string;
  /** USDT. */
  amount: number;
  /** TRC-20 wallet address. */
  address: string;
  /** When true the wallet receives `amount − fee`; default false (amount + fee is frozen). */
  subtract_fee_from_amount?: boolean;
}

/** The spec's Withdrawal object. */
export interface Withdrawal {
  id: string;
  amount: number;
  fee: number;
  currency: 'USDT';
  address: string;
  /** Null until sent. */
  tx_hash: string | null;
  status: WithdrawalStatus;
  created_at: string;
  updated_at: string;
}

/** Query of `GET /v1/withdrawals`. */
export interface ListWithdrawalsQuery {
  /** Default 100, at most 1000. */
  limit?: number;
  offset?: number;
}

/** Answer of `GET /v1/withdrawals` (no `total`). */
export interface WithdrawalList {
  data: Withdrawal[];
  limit: number;
  offset: number;
}

/** Answer of `GET /v1/withdrawals/fee`: the fee of the API key's terminal. */
export interface WithdrawalFee {
  fee: number;
  currency: 'USDT';
}

/** The spec's Terminal object. */
export interface Terminal {
  id: string;
  name: string;
  /** Available, USDT. */
  balance: number;
  /** Frozen, USDT. */
  balance_frozen: number;
  withdrawal_fee: number;
  currency: 'USDT';
  is_active: boolean;
}

/** Answer of `GET /v1/terminals`. */
export interface TerminalList {
  terminals: Terminal[];
}

/** Answer of `GET /v1/balance`: totals across the merchant's terminals. */
export interface Balance {
  balance: number;
  balance_frozen: number;
  currency: 'USDT';
}

/** Body of `POST /v1/transfers`: USDT between two terminals of one merchant, without fee. */
export interface CreateTransferParams {
  from_terminal_id: string;
  to_terminal_id: string;
  /** USDT. */
  amount: number;
}

/** Answer of `POST /v1/transfers`. */
export interface Transfer {
  success: boolean;
  from_terminal_id: string;
  to_terminal_id: string;
  amount: number;
  currency: 'USDT';
}

/** An entry of the bank and operator directory. */
export interface Bank {
  /** Sent as `bank` when creating a payment. */
  code: string;
  name: string;
}

/** Answer of `GET /v1/public/banks`: active entries, sorted by name. */
export interface BankDirectory {
  banks: Bank[];
}
