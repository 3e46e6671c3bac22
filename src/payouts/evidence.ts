import type { Queryable, Tx } from '../db/pool.js';
import { firstExecutorFileWith, firstReceiptWithFile, lockFileHash } from '../receipts/receipts.repo.js';
import { insertRiskHit, minuteOf } from '../risk/hits.repo.js';
import type { PayoutRow } from './payouts.repo.js';

/** Where a payout proof's content was used before: another payout's proof, or a payment's receipt or contest file. */
interface ProofUse {
  payout_id: string | null;
  payment_id: string | null;
  merchant_id: string;
  executor_id: string | null;
  /** `payout_proof`, a receipt's source (confirm, receipt, dispute, page) or `executor_file`. */
  source: string;
  created_at: Date;
}

/** The first payout other than `payoutId` completed with a proof of this content (payouts_proof_sha256, migration 052). */
async function firstPayoutProofWith(db: Queryable, sha256: Buffer, payoutId: string): Promise<ProofUse | undefined> {
  const { rows } = await db.query<ProofUse>(
    `SELECT id AS payout_id, NULL::uuid AS payment_id, merchant_id, executor_id, 'payout_proof' AS source, completed_at AS created_at
       FROM payouts WHERE proof_sha256 = $1 AND id <> $2 ORDER BY completed_at, id LIMIT 1`,
    [sha256, payoutId],
  );
  return rows[0];
}

// No payment has this id: a payout proof is compared with every payment's files.
const NO_PAYMENT = '00000000-0000-0000-0000-000000000000';

/**
 * The receipt check of payments (src/payments/evidence.ts), for the proof an executor completes a
 * payout with (issue 36, evidence checks): a file whose content was already the proof of another
 * payout, or a receipt or contest file of a payment — any merchant's, any executor's — flags the
 * payout for a person ('receipt_reused', action 'flagged', payout_id), in the transaction that
 * completes it. One transfer's screenshot shown for two payouts is one transfer claimed twice. The
 * first use is never flagged by a later one; a flag never decides (the payout stays completed).
 * Returns whether it flagged.
 */
export async function flagReusedProof(tx: Tx, sha256: Buffer, payout: PayoutRow): Promise<boolean> {
  // The same lock as the receipts': two completions with one file are checked one after the other.
  await lockFileHash(tx, sha256);
  const payoutUse = await firstPayoutProofWith(tx, sha256, payout.id);
  const receiptUse = await firstReceiptWithFile(tx, sha256, NO_PAYMENT);
  const contestUse = await firstExecutorFileWith(tx, sha256, NO_PAYMENT);
  const uses: ProofUse[] = [];
  if (payoutUse) uses.push(payoutUse);
  for (const use of [receiptUse, contestUse]) if (use) uses.push({ ...use, payout_id: null, executor_id: null });
  const first = uses.sort((a, b) => a.created_at.getTime() - b.created_at.getTime())[0];
  if (!first) return false;
  const prefix = sha256.toString('hex').slice(0, 12);
  const usedFor = first.payout_id ? `payout ${first.payout_id}` : `payment ${first.payment_id}`;
  await insertRiskHit(tx, {
    rule: 'receipt_reused',
    action: 'flagged',
    merchantId: payout.merchant_id,
    terminalId: payout.terminal_id,
    payoutId: payout.id,
    inputs: {
      what: 'payout proof',
      sha256: prefix,
      executor_id: payout.executor_id,
      first_payout_id: first.payout_id,
      first_payment_id: first.payment_id,
      first_merchant_id: first.merchant_id,
      first_executor_id: first.executor_id,
      first_source: first.source,
      first_at: first.created_at.toISOString(),
      same_merchant: first.merchant_id === payout.merchant_id,
      same_executor: first.executor_id !== null && first.executor_id === payout.executor_id,
    },
    figure: `receipt sha256 ${prefix}… already used for ${usedFor} (${minuteOf(first.created_at)})`,
  });
  return true;
}
