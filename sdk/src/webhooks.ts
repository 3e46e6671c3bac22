import { KassirWebhookError } from './errors.js';
import { fromBase64, hmacSha1, timingSafeEqual, toBytes } from './signing.js';
import type { Payment, PaymentStatus, Payout, PayoutStatus } from './types.js';

/** A payment webhook: sent on every status change of a payment that has a `notify_url`. */
export interface PaymentWebhookEvent {
  event: `payment.${Lowercase<PaymentStatus>}`;
  /** The event's own ID (also in `X-Event-Id`): deliveries are at least once, so deduplicate on it. */
  id: string;
  created_at: string;
  /** The payment as `payments.get` returns it. */
  data: Payment;
}

/** A payout webhook: sent on every status change of a payout that has a `notify_url`. */
export interface PayoutWebhookEvent {
  event: `payout.${PayoutStatus}`;
  id: string;
  created_at: string;
  /** The payout as `payouts.get` returns it. */
  data: Payout;
}

/** What Kassir POSTs to a `notify_url` (DESIGN.md decision 9). */
export type WebhookEvent = PaymentWebhookEvent | PayoutWebhookEvent;

/** Request headers in the shapes frameworks give them: a fetch `Headers`, or Node's lower-case record. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface WebhookOptions {
  /** The merchant's Secret Key; during a rotation's grace period, the new and the old one. */
  secret: string | readonly string[];
  /**
   * The `notification_token` given when the payment was created: when set, the `X-Notification-Token`
   * header must carry exactly it (payout webhooks carry none, so leave it unset for them).
   */
  notificationToken?: string;
}

/**
 * True when `signature` (the `X-Signature` header) is base64(HMAC-SHA1(secret, body)) for one of
 * the secrets. `body` must be the raw request body exactly as received (not re-serialised JSON).
 * Each comparison takes the same time wherever the signatures differ.
 */
export async function verifyWebhookSignature(
  body: string | Uint8Array,
  signature: string | null | undefined,
  secret: string | readonly string[],
): Promise<boolean> {
  const given = typeof signature === 'string' ? fromBase64(signature) : undefined;
  const secrets = typeof secret === 'string' ? [secret] : secret;
  let ok = false;
  // Every secret is tried, so the time taken does not tell which one matched.
  for (const candidate of secrets) {
    const expected = await hmacSha1(candidate, body);
    ok = timingSafeEqual(expected, given ?? new Uint8Array(0)) || ok;
  }
  return given !== undefined && ok;
}

/**
 * Checks a webhook request (signature, and notification token when given) and returns its event.
 * Throws KassirWebhookError when it must not be trusted; answer such a request with 400 or 401.
 */
export async function parseWebhook(body: string | Uint8Array, headers: WebhookHeaders, options: WebhookOptions): Promise<WebhookEvent> {
  if (!(await verifyWebhookSignature(body, header(headers, 'x-signature'), options.secret))) {
    throw new KassirWebhookError('The webhook signature does not match the Secret Key');
  }
  if (options.notificationToken !== undefined) {
    const token = header(headers, 'x-notification-token') ?? '';
    if (!timingSafeEqual(toBytes(options.notificationToken), toBytes(token))) throw new KassirWebhookError('The X-Notification-Token header does not match');
  }
  let event: unknown;
  try {
    event = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
  } catch {
    throw new KassirWebhookError('The webhook body is not JSON');
  }
  if (!isEvent(event)) throw new KassirWebhookError('The webhook body is not a Kassir event');
  return event;
}

function isEvent(value: unknown): value is WebhookEvent {
  if (typeof value !== 'object' || value === null) return false;
  const event = value as Record<string, unknown>;
  return (
    typeof event.event === 'string' &&
    /^(payment|payout)\./.test(event.event) &&
    typeof event.id === 'string' &&
    typeof event.created_at === 'string' &&
    typeof event.data === 'object' &&
    event.data !== null
  );
}

/** One header's value, whatever shape the headers come in. */
function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}
