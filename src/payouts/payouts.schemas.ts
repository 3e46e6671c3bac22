import { type Static, Type } from 'typebox';
import { maskCard, maskPhone } from '../lib/mask.js';
import { toNumber } from '../lib/money.js';
import type { PayoutRow } from './payouts.repo.js';

export const CreatePayoutBody = Type.Object(
  {
    ext_id: Type.String({ minLength: 1, maxLength: 255 }),
    amount: Type.Number({ description: 'amount in RUB' }),
    method: Type.String({ description: 'card or sbp' }),
    requisites: Type.String({ minLength: 1, maxLength: 64, description: 'card number (card) or phone number (sbp)' }),
    holder_name: Type.String({ minLength: 1, maxLength: 200 }),
    bank: Type.Optional(Type.String({ maxLength: 64, description: 'recipient bank code; may be omitted for card' })),
    notify_url: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  {
    'x-examples': {
      sbp: {
        summary: 'By SBP to a phone number',
        value: {
          ext_id: 'payout-2001',
          amount: 5000,
          method: 'sbp',
          requisites: '+79001234567',
          holder_name: 'Ivan Ivanov',
          bank: 'sberbank',
          notify_url: 'https://shop.example.com/kassir/webhook',
        },
      },
      card: {
        summary: 'To a card',
        value: { ext_id: 'payout-2002', amount: 3000, method: 'card', requisites: '2200700123456781', holder_name: 'Ivan Ivanov' },
      },
    },
  },
);
export type CreatePayoutBody = Static<typeof CreatePayoutBody>;

/** The spec's Payout object; `completed_at` is absent in the creation response. */
export const Payout = Type.Object({
  id: Type.String(),
  ext_id: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  method: Type.String(),
  requisites: Type.String(),
  holder_name: Type.String(),
  bank: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
  completed_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type Payout = Static<typeof Payout>;

/** A payout as the API reference's examples show it: just created (no `completed_at`), and completed. */
export const NEW_PAYOUT_EXAMPLE: Payout = {
  id: '3e8c1f7a-6b2d-4d9e-a1c4-5f0b8e7d2a93',
  ext_id: 'payout-2001',
  amount: 5000,
  currency: 'RUB',
  method: 'sbp',
  requisites: '+79001234567',
  holder_name: 'Ivan Ivanov',
  bank: 'sberbank',
  status: 'pending',
  created_at: '2026-11-24T12:00:00.000Z',
};
export const PAYOUT_EXAMPLE: Payout = { ...NEW_PAYOUT_EXAMPLE, status: 'completed', completed_at: '2026-11-24T12:04:31.000Z' };

export function toPayout(row: PayoutRow, options: { withCompletedAt: boolean } = { withCompletedAt: true }): Payout {
  const payout: Payout = {
    id: row.id,
    ext_id: row.ext_id,
    amount: toNumber(row.amount)!,
    currency: row.currency,
    method: row.method,
    requisites: row.requisites,
    holder_name: row.holder_name,
    bank: row.bank,
    status: row.status,
    created_at: row.created_at.toISOString(),
  };
  if (options.withCompletedAt) payout.completed_at = row.completed_at?.toISOString() ?? null;
  return payout;
}

/** What an executor sees of a payout it has not taken: enough to choose, not enough to pay. */
export function toAvailablePayout(row: PayoutRow) {
  return {
    id: row.id,
    amount: toNumber(row.amount)!,
    currency: row.currency,
    method: row.method,
    requisites: row.method === 'card' ? maskCard(row.requisites) : maskPhone(row.requisites),
    bank: row.bank,
    created_at: row.created_at.toISOString(),
  };
}

/** An executor's own taken payout: everything needed to pay it. */
export function toTakenPayout(row: PayoutRow) {
  return {
    ...toAvailablePayout(row),
    requisites: row.requisites,
    holder_name: row.holder_name,
    status: row.status,
    taken_at: row.taken_at?.toISOString() ?? null,
  };
}

/** A payout the executor paid, for its history: the recipient masked again (the transfer is done), when, and whether a proof is kept. */
export function toPaidPayout(row: PayoutRow) {
  return {
    ...toAvailablePayout(row),
    holder_name: row.holder_name,
    status: row.status,
    taken_at: row.taken_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
    has_proof: row.proof_key !== null,
  };
}
