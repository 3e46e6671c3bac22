import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { confirmPayment } from '../payments/confirm.service.js';
import { changePayment } from '../payments/lifecycle.js';
import type { UploadInput } from '../receipts/upload.js';
import { insertRiskHit, type RiskHit } from '../risk/hits.repo.js';
import { canonicalIp } from '../risk/marks.js';
import { blockHit } from '../risk/rules.js';
import { findPaymentByPageToken, notePayer, type PagePaymentRow } from './pages.repo.js';

/**
 * What the payer is shown, derived from the payment (spec "States and transitions"):
 * - `pay`: PENDING, not yet confirmed, still within `valid_until`;
 * - `checking`: PENDING after "I paid" (verification runs until `verify_until`), or PROCESSING;
 * - `success`: COMPLETED or COMPLETED_APPEAL;
 * - `expired`: cancelled by the timeout, or PENDING past `valid_until` before the sweep gets to it
 *   (the requisites must not stay on screen a moment longer than the payment accepts money);
 * - `unverified`: cancelled because the confirmed transfer was not found;
 * - `cancelled`: cancelled by hand, or a dispute that was withdrawn;
 * - `dispute`: under review.
 */
export type PageState = 'pay' | 'checking' | 'success' | 'expired' | 'unverified' | 'cancelled' | 'dispute';

export function pageState(row: Pick<PagePaymentRow, 'status' | 'verify_until' | 'valid_until' | 'cancel_reason'>, now: Date): PageState {
  switch (row.status) {
    case 'COMPLETED':
    case 'COMPLETED_APPEAL':
      return 'success';
    case 'DISPUTE':
      return 'dispute';
    case 'PROCESSING':
      return 'checking';
    case 'PENDING':
      if (row.verify_until) return 'checking';
      return row.valid_until.getTime() <= now.getTime() ? 'expired' : 'pay';
    case 'CANCELLED':
      if (row.cancel_reason === 'expired') return 'expired';
      if (row.cancel_reason === 'transfer_not_found') return 'unverified';
      return 'cancelled';
    default:
      return 'cancelled';
  }
}

/** The page's status document (`GET <page>/:token/status`): only what the page needs. */
export interface PageStatus {
  state: PageState;
  status: string;
  valid_until: string;
  server_time: string;
}

export function pageStatus(row: PagePaymentRow, now = new Date()): PageStatus {
  return { state: pageState(row, now), status: row.status, valid_until: row.valid_until.toISOString(), server_time: now.toISOString() };
}

// Tokens are 24 random bytes in base64url (32 characters); anything else is not worth a query.
const TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

export class PageNotFound extends DomainError {
  constructor() {
    super('PAY_006', 'Payment page not found');
  }
}

/** The payment behind a page token, or PageNotFound. */
export async function loadPage(ctx: AppContext, token: string): Promise<PagePaymentRow> {
  const row = TOKEN.test(token) ? await findPaymentByPageToken(ctx.db, token) : undefined;
  if (!row) throw new PageNotFound();
  return row;
}

/**
 * "I paid" on the page: the same confirm as `POST /v1/payments/{id}/confirm` (spec flow (b): "the
 * payment page calls confirm automatically when the payer presses the paid button"), recorded
 * with source `page`. Only an uploaded file is taken from the payer: a `receipt_url` would let an
 * anonymous visitor plant links in front of the dispute reviewer.
 */
export async function confirmFromPage(ctx: AppContext, payment: PagePaymentRow, upload: UploadInput): Promise<PageStatus> {
  await confirmPayment(ctx, payment.merchant_id, payment.id, { file: upload.file, fields: {}, data: {} }, 'page');
  const fresh = await findPaymentByPageToken(ctx.db, payment.page_token);
  return pageStatus(fresh!);
}

/** A device fingerprint as the page's script sends it: its stored id and the hash of its traits. */
const DEVICE = /^[A-Za-z0-9_.-]{8,100}$/;

/**
 * The risk rules of the payment page (issue 36): a payer whose IP or device fingerprint is
 * blocked, or whose IP opened more payment pages than the IP velocity limit allows, is not
 * served the payment — it is cancelled through its lifecycle (the merchant gets the ordinary
 * webhook and learns nothing of why) and the page shows it as cancelled. What the page saw is
 * kept on the payment the first time (so that "block from a payment" can use it), and the IP is
 * counted in its window that first time only: reopening one's own page is no new payment. A
 * payment no longer PENDING is left as it is. Returns the payment as it is now.
 */
export async function checkPayer(ctx: AppContext, payment: PagePaymentRow, seen: { ip?: string; device?: unknown }): Promise<PagePaymentRow> {
  if (payment.status !== 'PENDING') return payment;
  const ip = seen.ip === undefined ? undefined : canonicalIp(seen.ip);
  const device = typeof seen.device === 'string' && DEVICE.test(seen.device) ? seen.device : undefined;
  const about = { merchantId: payment.merchant_id, terminalId: payment.terminal_id, paymentId: payment.id };
  let hit: RiskHit | undefined;
  if (ip) {
    const newIp = payment.payer_ip === null && (await notePayer(ctx.db, payment.id, 'payer_ip', ip));
    const block = await ctx.risk.blockFor('ip', ip, payment.merchant_id);
    if (block) hit = blockHit(block, { ...about, inputs: { ip } });
    else if (newIp) {
      const counted = await ctx.risk.countIp({ ip, amount: payment.amount, currency: payment.currency, ...about });
      hit = counted.refused?.hit;
    }
  }
  if (!hit && device) {
    if (payment.payer_device === null) await notePayer(ctx.db, payment.id, 'payer_device', device);
    const block = await ctx.risk.blockFor('device', device, payment.merchant_id);
    if (block) hit = blockHit(block, { ...about, inputs: { device } });
  }
  if (!hit) return payment;
  const refusal = hit;
  await transaction(ctx.db, async (tx) => {
    // Someone else may have moved it first (paid, expired): then there is nothing to refuse.
    if (await changePayment(tx, ctx, payment.id, 'cancel', { reason: 'risk' })) await insertRiskHit(tx, refusal);
  });
  return (await findPaymentByPageToken(ctx.db, payment.page_token))!;
}
