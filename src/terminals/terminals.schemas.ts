import { type Static, Type } from 'typebox';
import { ORDER_CURRENCIES, type OrderCurrency } from '../lib/methods.js';
import { toNumber } from '../lib/money.js';
import type { TerminalRow } from './terminals.repo.js';

const Percent = Type.Number({ minimum: 0, exclusiveMaximum: 100, description: 'percent' });

/** The spec's Terminal object ("Resources and their fields"). */
export const Terminal = Type.Object({
  id: Type.String(),
  name: Type.String(),
  balance: Type.Number(),
  balance_frozen: Type.Number(),
  withdrawal_fee: Type.Number(),
  currency: Type.String(),
  is_active: Type.Boolean(),
});

/** What the operator sees: the spec's Terminal plus its settings. */
export const AdminTerminal = Type.Object({
  ...Terminal.properties,
  merchant_id: Type.String(),
  payment_currency: Type.String({ description: 'the currency of payments through this terminal (RUB, KZT, AZN, TJS)' }),
  payin_rate: Type.Number(),
  payout_rate: Type.Number(),
  created_at: Type.String({ format: 'date-time' }),
  return_url: Type.Union([Type.String(), Type.Null()], { description: 'where the payment page sends the payer after a successful payment' }),
  is_test: Type.Boolean({ description: 'a test terminal: its payments and payouts touch no executor and no money (set at creation only)' }),
  fail_url: Type.Union([Type.String(), Type.Null()], {
    description: 'where the payment page sends the payer when the payment did not go through (expired or cancelled)',
  }),
  notify_url: Type.Union([Type.String(), Type.Null()], {
    description: "webhook address for the terminal's payments and payouts created without a notify_url of their own",
  }),
  dispute_timeout: Type.String({ description: 'what a dispute its executor did not answer in time comes to: escalate (to support) or approve' }),
  dispute_answer_seconds: Type.Union([Type.Integer(), Type.Null()], { description: 'the executor’s answer window; null: DISPUTE_ANSWER_SECONDS' }),
  dispute_night_answer_seconds: Type.Union([Type.Integer(), Type.Null()], {
    description: 'the window for disputes opened at night (22:00-08:00 in DISPUTE_TIMEZONE); null: the day window',
  }),
  api_key: Type.Optional(Type.String({ description: 'shown once, at creation and rotation' })),
});

export const CreateTerminalBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  currency: Type.Unsafe<OrderCurrency>({ type: 'string', enum: [...ORDER_CURRENCIES] }),
  payin_rate: Type.Optional(Percent),
  payout_rate: Type.Optional(Percent),
  withdrawal_fee: Type.Optional(Type.Number({ minimum: 0 })),
  is_test: Type.Optional(
    Type.Boolean({
      description:
        'a test terminal (default false): its payments get test requisites from no executor and its payouts go to no one; no money moves. A terminal stays test or live for its life',
    }),
  ),
});
export type CreateTerminalBody = Static<typeof CreateTerminalBody>;

export const UpdateTerminalBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  is_active: Type.Optional(Type.Boolean()),
  payin_rate: Type.Optional(Percent),
  payout_rate: Type.Optional(Percent),
  withdrawal_fee: Type.Optional(Type.Number({ minimum: 0 })),
  return_url: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], { description: 'absolute http(s) URL; null clears it' })),
  fail_url: Type.Optional(
    Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], {
      description: 'absolute http(s) URL for a payment that did not go through; null clears it',
    }),
  ),
  notify_url: Type.Optional(
    Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], {
      description:
        "webhook address for the terminal's payments and payouts created without their own: an absolute http(s) URL the service may call (no internal addresses, as for a payment's notify_url); null clears it",
    }),
  ),
  dispute_timeout: Type.Optional(
    Type.Unsafe<'escalate' | 'approve'>({
      type: 'string',
      enum: ['escalate', 'approve'],
      description:
        'a dispute its executor did not answer by answer_due_at: escalate (default: to the support queue) or approve (with the merchant’s claimed amount)',
    }),
  ),
  dispute_answer_seconds: Type.Optional(
    Type.Union([Type.Integer({ minimum: 60, maximum: 604800 }), Type.Null()], {
      description: 'the executor’s answer window for this terminal’s disputes; null: DISPUTE_ANSWER_SECONDS',
    }),
  ),
  dispute_night_answer_seconds: Type.Optional(
    Type.Union([Type.Integer({ minimum: 60, maximum: 604800 }), Type.Null()], {
      description: 'the window for disputes opened at night (22:00-08:00 in DISPUTE_TIMEZONE); null: the day window',
    }),
  ),
});
export type UpdateTerminalBody = Static<typeof UpdateTerminalBody>;

export const AdjustmentBody = Type.Object({
  amount: Type.Number({ description: 'signed USDT amount: positive credits, negative debits the available balance' }),
  reason: Type.String({ minLength: 1, maxLength: 500 }),
});
export type AdjustmentBody = Static<typeof AdjustmentBody>;

export const RotateBody = Type.Object({
  grace_seconds: Type.Integer({ minimum: 0, maximum: 30 * 24 * 3600, default: 0, description: 'how long the old key stays valid' }),
});

export function toTerminal(row: TerminalRow): Static<typeof Terminal> {
  return {
    id: row.id,
    name: row.name,
    balance: toNumber(row.balance)!,
    balance_frozen: toNumber(row.balance_frozen)!,
    withdrawal_fee: toNumber(row.withdrawal_fee)!,
    currency: 'USDT',
    is_active: row.is_active,
  };
}

export function toAdminTerminal(row: TerminalRow, apiKey?: string): Static<typeof AdminTerminal> {
  return {
    ...toTerminal(row),
    merchant_id: row.merchant_id,
    payment_currency: row.currency,
    payin_rate: toNumber(row.payin_rate)!,
    payout_rate: toNumber(row.payout_rate)!,
    created_at: row.created_at.toISOString(),
    return_url: row.return_url,
    is_test: row.is_test,
    fail_url: row.fail_url,
    notify_url: row.notify_url,
    dispute_timeout: row.dispute_timeout,
    dispute_answer_seconds: row.dispute_answer_seconds,
    dispute_night_answer_seconds: row.dispute_night_answer_seconds,
    ...(apiKey ? { api_key: apiKey } : {}),
  };
}
