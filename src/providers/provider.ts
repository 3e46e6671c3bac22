/**
 * One interface for every upstream provider (an aggregator that executes payments and payouts
 * for us). Each kind lives in its own folder; `kassir` speaks spec/merchant-api.md as a merchant.
 */

/** A payment as the provider reports it, reduced to what Kassir uses. */
export interface ProviderPayment {
  id: string;
  status: string;
  amount: number;
  currency: string;
  requisites: {
    type: string;
    value: string;
    bank?: string;
    bank_code?: string;
    bank_name?: string;
    holder?: string;
    country?: string;
    currency?: string;
    amount_local?: number;
  };
  valid_until?: string;
}

export interface ProviderPayout {
  id: string;
  status: string;
}

export interface CreatePaymentRequest {
  extId: string;
  amount: string;
  currency: string;
  method: string;
  bank?: string;
  country?: string;
  clientId?: string;
  notifyUrl: string;
  notificationToken: string;
}

export interface CreatePayoutRequest {
  extId: string;
  amount: string;
  method: string;
  requisites: string;
  holderName: string;
  bank?: string;
  notifyUrl: string;
}

export interface ReceiptFile {
  content: Buffer;
  contentType: string;
  filename: string;
}

export interface DisputeRequest {
  amount?: number;
  comment?: string;
  receipt?: ReceiptFile;
}

/** A callback, verified: the event id (for replay protection), its name and the resource. */
export interface ProviderCallback {
  eventId: string;
  event: string;
  notificationToken: string | undefined;
  resourceType: 'payment' | 'payout';
  payment?: ProviderPayment;
  payout?: ProviderPayout;
}

export interface ProviderAdapter {
  createPayment(request: CreatePaymentRequest, signal: AbortSignal): Promise<ProviderPayment>;
  getPayment(id: string, signal?: AbortSignal): Promise<ProviderPayment>;
  /** Verifies a callback's signature and reads it; throws ProviderError('rejected') when it is not genuine. */
  parseCallback(headers: Record<string, string | string[] | undefined>, body: Buffer): ProviderCallback;
  openDispute(id: string, dispute: DisputeRequest, signal?: AbortSignal): Promise<void>;
  sendReceipt(id: string, receipt: ReceiptFile, signal?: AbortSignal): Promise<void>;
  cancelDispute(id: string, signal?: AbortSignal): Promise<void>;
  createPayout(request: CreatePayoutRequest, signal: AbortSignal): Promise<ProviderPayout>;
  getPayout(id: string, signal?: AbortSignal): Promise<ProviderPayout>;
}

/**
 * Why a provider call failed, as routing needs to know it:
 * - `unavailable`: network error, timeout or 5xx — try the next route and count it against the
 *   provider's circuit breaker;
 * - `declined`: the provider answered that it cannot take this request (no requisites, a method it
 *   does not serve…) — try the next route, the provider is healthy;
 * - `rejected`: the provider refused our request or callback as invalid.
 */
export class ProviderError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'declined' | 'rejected',
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}
