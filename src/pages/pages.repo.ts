import type { Queryable } from '../db/pool.js';
import type { PaymentRow } from '../payments/payments.repo.js';

/** A payment as its page sees it: the payment plus the terminal's return links (after success, after a payment that did not go through). */
export interface PagePaymentRow extends PaymentRow {
  return_url: string | null;
  fail_url: string | null;
}

/**
 * The payment behind a page token. The token is the page's only credential (it stands in for
 * the merchant's signature), so this is the one look-up without an owner scope: whoever holds the
 * token is the payer the merchant sent there.
 */
export async function findPaymentByPageToken(db: Queryable, token: string): Promise<PagePaymentRow | undefined> {
  const { rows } = await db.query<PagePaymentRow>(
    `SELECT p.*, t.name AS terminal_name, t.return_url, t.fail_url, b.name AS req_bank_name
       FROM payments p
       JOIN terminals t ON t.id = p.terminal_id
       LEFT JOIN banks b ON b.code = p.req_bank_code
      WHERE p.page_token = $1`,
    [token],
  );
  return rows[0];
}

/**
 * Notes what the page saw of its payer (migration 047), the first time only: true when `column`
 * was empty and now holds `value` (a second open, or a racing one, finds it set and returns false).
 */
export async function notePayer(db: Queryable, paymentId: string, column: 'payer_ip' | 'payer_device', value: string): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE payments SET ${column} = $2 WHERE id = $1 AND ${column} IS NULL`, [paymentId, value]);
  return (rowCount ?? 0) > 0;
}
