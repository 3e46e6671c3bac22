import type { Decimal } from 'decimal.js';
import { PgCode, pgConstraint, pgErrorCode, type Tx } from '../db/pool.js';
import { type AccountRef, type Posting, post } from './ledger.repo.js';

/**
 * Funds on hold for a payout or a withdrawal: moved from available to frozen, then settled or
 * released — on a merchant's terminal, or (an executor's withdrawal of its deposit) on an executor.
 */
export type Hold = {
  /**
   * 'payout' or 'withdrawal': the postings are `<kind>_reserve`, `<kind>_settle`, `<kind>_release`;
   * 'dispute': the claimed value frozen on the executor while its dispute is open (released by
   * payments/lifecycle.ts, or taken by the pay-in of its approval).
   */
  kind: 'payout' | 'withdrawal' | 'dispute';
  refId: string;
  /** The whole amount frozen. */
  amount: Decimal;
} & ({ merchantId: string; terminalId: string; executorId?: undefined } | { executorId: string; merchantId?: undefined; terminalId?: undefined });

/** The hold owner's available and frozen accounts, and the merchant the postings name (none for an executor). */
function accountsOf(hold: Hold): { available: AccountRef; frozen: AccountRef; merchantId: string | null } {
  if (hold.executorId !== undefined) {
    return {
      available: { executorId: hold.executorId, kind: 'executor_available' },
      frozen: { executorId: hold.executorId, kind: 'executor_frozen' },
      merchantId: null,
    };
  }
  return {
    available: { terminalId: hold.terminalId, kind: 'terminal_available' },
    frozen: { terminalId: hold.terminalId, kind: 'terminal_frozen' },
    merchantId: hold.merchantId,
  };
}

/** True when an error is the ledger refusing to take a terminal account below zero. */
export function isInsufficientFunds(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.checkViolation && pgConstraint(err) === 'ledger_accounts_terminal_nonnegative';
}

/** True when an error is the ledger refusing to take an executor account below its floor (0, or minus its credit line). */
export function isDepositShort(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.checkViolation && pgConstraint(err) === 'ledger_accounts_executor_floor';
}

/**
 * Freezes the hold's amount; fails with the non-negative constraint when the terminal lacks it (an
 * executor's floor is its credit line: a caller that must not dip into it checks first).
 */
export async function reserve(tx: Tx, hold: Hold): Promise<void> {
  const { available, frozen, merchantId } = accountsOf(hold);
  await post(tx, {
    kind: `${hold.kind}_reserve`,
    refId: hold.refId,
    merchantId,
    memo: null,
    entries: [
      { account: available, amount: hold.amount.negated() },
      { account: frozen, amount: hold.amount },
    ],
  });
}

/** Returns the frozen amount to the available balance (failed or cancelled). */
export async function release(tx: Tx, hold: Hold): Promise<void> {
  const { available, frozen, merchantId } = accountsOf(hold);
  await post(tx, {
    kind: `${hold.kind}_release`,
    refId: hold.refId,
    merchantId,
    memo: null,
    entries: [
      { account: frozen, amount: hold.amount.negated() },
      { account: available, amount: hold.amount },
    ],
  });
}

/** Debits the frozen amount: `fee` to fee revenue, the rest out of the system (completed). */
export async function settle(tx: Tx, hold: Hold, fee: Decimal): Promise<void> {
  const { frozen, merchantId } = accountsOf(hold);
  const entries: Posting['entries'] = [
    { account: frozen, amount: hold.amount.negated() },
    { account: { kind: 'system_outgoing' }, amount: hold.amount.minus(fee) },
  ];
  if (!fee.isZero()) entries.push({ account: { kind: 'system_fee_revenue' }, amount: fee });
  await post(tx, { kind: `${hold.kind}_settle`, refId: hold.refId, merchantId, memo: null, entries });
}

/**
 * Debits the frozen amount of a payout an executor paid from its own money (DESIGN.md "Executors'
 * money"): the executor's available balance is credited `credit`, the platform keeps the rest
 * (negative when the executor's reward exceeds the payout's fee).
 */
export async function settleToExecutor(tx: Tx, hold: Hold, executorId: string, credit: Decimal): Promise<void> {
  if (hold.executorId !== undefined) throw new Error(`settleToExecutor: ${hold.kind} ${hold.refId} is held on an executor, not a terminal`);
  const revenue = hold.amount.minus(credit);
  const entries: Posting['entries'] = [
    { account: { terminalId: hold.terminalId, kind: 'terminal_frozen' }, amount: hold.amount.negated() },
    { account: { executorId, kind: 'executor_available' }, amount: credit },
  ];
  if (!revenue.isZero()) entries.push({ account: { kind: 'system_fee_revenue' }, amount: revenue });
  await post(tx, { kind: `${hold.kind}_settle`, refId: hold.refId, merchantId: hold.merchantId, memo: null, entries });
}
