import { PgCode, pgConstraint, pgErrorCode, type Tx } from '../db/pool.js';

/** Records a transfer between two terminals of one merchant; its posting follows in the same transaction. */
export async function insertTransfer(
  tx: Tx,
  t: { merchantId: string; fromTerminalId: string; toTerminalId: string; amount: string; idempotencyRequest: string | null },
): Promise<string> {
  const { rows } = await tx.query<{ id: string }>(
    'INSERT INTO transfers (merchant_id, from_terminal_id, to_terminal_id, amount, idempotency_request) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [t.merchantId, t.fromTerminalId, t.toTerminalId, t.amount, t.idempotencyRequest],
  );
  return rows[0]!.id;
}

/** A unique violation of the transfer made for one Idempotency-Key request: an earlier attempt already moved the money. */
export function isIdempotencyRequestTaken(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'transfers_idempotency_request_key';
}
