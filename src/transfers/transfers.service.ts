import type { Decimal } from 'decimal.js';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isInsufficientFunds } from '../ledger/holds.js';
import { post } from '../ledger/ledger.repo.js';
import { checkDecimal, USDT_DECIMALS } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import { findMerchantTerminal } from '../terminals/terminals.repo.js';
import { insertTransfer, isIdempotencyRequestTaken } from './transfers.repo.js';

export interface TransferInput {
  from_terminal_id: unknown;
  to_terminal_id: unknown;
  amount: unknown;
}

/**
 * Moves USDT between two terminals of one merchant (spec "POST /v1/transfers"): atomically,
 * without fee, as one balanced posting. TRF_001 for a malformed, zero, negative or same-terminal
 * request; TRF_002 for a terminal that is not the merchant's; TRF_003 when the source lacks funds
 * — decided by the ledger's non-negative constraint, so concurrent transfers cannot overdraw.
 * With `idempotencyRequest` (an Idempotency-Key's request id) the transfer records it: when an
 * earlier attempt at that request already moved the money, it is not moved again. `audit` (a
 * merchant's person in the cabinet) writes its row in the transaction of the posting.
 */
export async function transfer(
  ctx: AppContext,
  merchantId: string,
  input: TransferInput,
  idempotencyRequest?: string,
  audit?: AuditRecorder,
): Promise<{ from: string; to: string; amount: Decimal; repeated: boolean }> {
  const { from_terminal_id: from, to_terminal_id: to } = input;
  if (typeof from !== 'string' || !isUuid(from)) throw new DomainError('TRF_001', 'from_terminal_id must be a terminal id (UUID)');
  if (typeof to !== 'string' || !isUuid(to)) throw new DomainError('TRF_001', 'to_terminal_id must be a terminal id (UUID)');
  const amount = checkDecimal(input.amount, { field: 'amount', places: USDT_DECIMALS, min: 0, minExclusive: true, max: '1e20', maxExclusive: true });
  if (typeof amount === 'string') throw new DomainError('TRF_001', amount);
  if (from.toLowerCase() === to.toLowerCase()) throw new DomainError('TRF_001', 'from_terminal_id and to_terminal_id must be different terminals');
  for (const id of [from, to]) {
    if (!(await findMerchantTerminal(ctx.db, merchantId, id))) throw new DomainError('TRF_002', `Terminal ${id} not found`, { terminal_id: id });
  }
  try {
    await transaction(ctx.db, async (tx) => {
      // Opposite transfers cannot deadlock: the posting locks both accounts in one fixed order.
      const id = await insertTransfer(tx, {
        merchantId,
        fromTerminalId: from,
        toTerminalId: to,
        amount: amount.toFixed(),
        idempotencyRequest: idempotencyRequest ?? null,
      });
      await post(tx, {
        kind: 'transfer',
        refId: id,
        merchantId,
        memo: null,
        entries: [
          { account: { terminalId: from, kind: 'terminal_available' }, amount: amount.negated() },
          { account: { terminalId: to, kind: 'terminal_available' }, amount },
        ],
      });
      await audit?.(tx, 'transfer.create', 'terminal', from, null, {
        transfer_id: id,
        from_terminal_id: from,
        to_terminal_id: to,
        amount: amount.toFixed(),
        currency: 'USDT',
      });
    });
  } catch (err) {
    // The same request (by its Idempotency-Key) was done by an earlier attempt: done, once.
    if (idempotencyRequest && isIdempotencyRequestTaken(err)) {
      return { from, to, amount, repeated: true };
    }
    if (isInsufficientFunds(err)) {
      const source = await findMerchantTerminal(ctx.db, merchantId, from);
      throw new DomainError('TRF_003', 'Insufficient funds on the source terminal', { available: Number(source!.balance) });
    }
    throw err;
  }
  return { from, to, amount, repeated: false };
}
