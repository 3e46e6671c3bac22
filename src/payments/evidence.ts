import type { Queryable, Tx } from '../db/pool.js';
import { type FileUse, firstReceiptWithFile, lockFileHash } from '../receipts/receipts.repo.js';
import { insertRiskHit, minuteOf } from '../risk/hits.repo.js';
import { namesMatch } from '../risk/names.js';
import { findPayerName } from './payments.repo.js';

/**
 * Evidence checks (issue 36 item 4; DESIGN.md "Risk rules (contract)"): a receipt file already
 * used for another payment, and a payer name in the bank message that is not the one the merchant
 * sent, flag the payment (or its dispute) for a person with the reason, in the transaction that
 * attached the evidence. A flag never decides: nothing here changes a status, and nothing of it
 * reaches the merchant's answers. The bank reference check is incoming/'s (it owns the messages).
 */

/** What a flag is on: the payment, and its dispute when the evidence came with one. */
export interface FlagTarget {
  id: string;
  merchant_id: string;
  terminal_id: string | null;
  disputeId?: string | null;
}

export { minuteOf } from '../risk/hits.repo.js';

/**
 * Flags `on` when a file with this content was already used for another payment — any
 * merchant's: the same screenshot sent for two orders is one transfer claimed twice. `elsewhere`
 * looks in the other places files are kept (an executor's contest file, disputes/). The first use
 * is never flagged by a later one. Returns whether it flagged.
 */
export async function flagReusedFile(
  tx: Tx,
  sha256: Buffer | null | undefined,
  on: FlagTarget,
  what: string,
  elsewhere?: (db: Queryable, sha256: Buffer, paymentId: string) => Promise<FileUse | undefined>,
): Promise<boolean> {
  if (!sha256) return false;
  await lockFileHash(tx, sha256);
  const uses = [await firstReceiptWithFile(tx, sha256, on.id), elsewhere ? await elsewhere(tx, sha256, on.id) : undefined].filter(
    (use): use is FileUse => use !== undefined,
  );
  const first = uses.sort((a, b) => a.created_at.getTime() - b.created_at.getTime())[0];
  if (!first) return false;
  const prefix = sha256.toString('hex').slice(0, 12);
  await insertRiskHit(tx, {
    rule: 'receipt_reused',
    action: 'flagged',
    merchantId: on.merchant_id,
    terminalId: on.terminal_id,
    paymentId: on.id,
    disputeId: on.disputeId ?? null,
    inputs: {
      what,
      sha256: prefix,
      first_payment_id: first.payment_id,
      first_merchant_id: first.merchant_id,
      first_source: first.source,
      first_at: first.created_at.toISOString(),
      same_merchant: first.merchant_id === on.merchant_id,
    },
    figure: `receipt sha256 ${prefix}… already used for payment ${first.payment_id} (${minuteOf(first.created_at)})`,
  });
  return true;
}

/**
 * Flags the payment when the bank message names a payer whose name is not the one the merchant
 * sent on create (`payer_name`); no name on either side, no check. Returns whether it flagged.
 */
export async function flagPayerName(tx: Tx, on: FlagTarget, bankName: string | null | undefined, notificationId: string): Promise<boolean> {
  if (!bankName) return false;
  const merchantName = await findPayerName(tx, on.id);
  if (namesMatch(bankName, merchantName) !== false) return false;
  await insertRiskHit(tx, {
    rule: 'payer_name',
    action: 'flagged',
    merchantId: on.merchant_id,
    terminalId: on.terminal_id,
    paymentId: on.id,
    inputs: { bank_name: bankName, merchant_name: merchantName, notification_id: notificationId },
    figure: `payer name '${bankName}' in the bank message ≠ '${merchantName}' sent by the merchant`,
  });
  return true;
}
