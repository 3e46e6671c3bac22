import { type Static, Type } from 'typebox';
import { toNumber } from '../lib/money.js';
import type { PaymentView } from './payments.repo.js';

/** Request body of `POST /v1/payments` (spec table). Amount bounds and the method/currency matrix are checked in the service. */
export const CreatePaymentBody = Type.Object(
  {
    ext_id: Type.String({ minLength: 1, maxLength: 255, description: 'unique order ID, max 255 chars' }),
    amount: Type.Number({ description: 'amount in the order currency; RUB 100 to 300,000' }),
    currency: Type.Optional(Type.String({ description: 'RUB, KZT, AZN or TJS; default: the terminal currency' })),
    method: Type.Optional(
      Type.String({ description: 'SBP, CARD, SBP_QR, PHONE, SIM, CROSS_BORDER, CROSS_BORDER_CARD, CROSS_BORDER_SIM, VIET_QR; default CARD' }),
    ),
    bank: Type.Optional(Type.String({ maxLength: 64, description: 'bank code filter; an operator code for CROSS_BORDER_SIM' })),
    country: Type.Optional(Type.String({ maxLength: 2, description: 'ISO-2 country of the requisites (cross-border)' })),
    client_id: Type.Optional(Type.String({ maxLength: 255 })),
    notify_url: Type.Optional(Type.String({ maxLength: 2048 })),
    notification_token: Type.Optional(Type.String({ maxLength: 255 })),
    payer_name: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'Kassir extension, optional: the payer’s name as the merchant knows it ("Иван Иванов", "Ivan I."). When the bank message names the sender and the name does not match (surname and first-name initial, Cyrillic or Latin), the payment is flagged for a person to look at; the payment and the answer are unchanged either way. Other unknown fields are ignored.',
      }),
    ),
  },
  {
    'x-examples': {
      card: { summary: 'RUB by card', value: { ext_id: 'order-1001', amount: 1500, currency: 'RUB', method: 'CARD' } },
      sbp: {
        summary: 'RUB by SBP, with a webhook',
        value: {
          ext_id: 'order-1002',
          amount: 2500,
          method: 'SBP',
          bank: 'sberbank',
          client_id: 'customer-77',
          notify_url: 'https://shop.example.com/kassir/webhook',
          notification_token: 'n-5f2a9c',
        },
      },
      crossBorder: {
        summary: 'Cross-border: a RUB order paid in Tajikistan',
        value: { ext_id: 'order-1003', amount: 1500, currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' },
      },
    },
  },
);
export type CreatePaymentBody = Static<typeof CreatePaymentBody>;

export const Requisites = Type.Object({
  type: Type.String(),
  value: Type.String(),
  bank: Type.Optional(Type.String()),
  bank_code: Type.Optional(Type.String()),
  bank_name: Type.Optional(Type.String()),
  holder: Type.String(),
  country: Type.Optional(Type.String()),
  currency: Type.Optional(Type.String()),
  amount_local: Type.Optional(Type.Number()),
});

/** The spec's Payment object. */
export const Payment = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ext_id: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  rate: Type.Number(),
  payin_rate: Type.Number(),
  terminal_id: Type.String(),
  terminal_name: Type.String(),
  status: Type.String(),
  method: Type.String(),
  requisites: Requisites,
  payment_url: Type.Union([Type.String(), Type.Null()]),
  valid_until: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
  message: Type.Optional(Type.String()),
  received_amount: Type.Optional(Type.Number({ description: 'COMPLETED_APPEAL only: the amount actually received and credited' })),
});
export type Payment = Static<typeof Payment>;

/** A payment as the examples of the API reference show it (`GET /v1/payments/{id}`, the create's answer). */
export const PAYMENT_EXAMPLE: Payment = {
  id: '5b4f0c7e-2a1d-4e8f-9c3b-7d6a5e4f3c21',
  ext_id: 'order-1001',
  amount: 1500,
  currency: 'RUB',
  rate: 95.5,
  payin_rate: 3.5,
  terminal_id: '0b9f2a57-3c1e-4d8a-9f6b-2e7c5d4a1b30',
  terminal_name: 'Main shop',
  status: 'PENDING',
  method: 'CARD',
  requisites: { type: 'card', value: '2200700123456781', bank: 'tinkoff', bank_code: 'tinkoff', bank_name: 'Т-Банк', holder: 'Ivan I.' },
  payment_url: 'https://kassir.example.com/pay/q3Vd8mXb2LkP0sTz7NwYh4RcJ6fA1eGu',
  valid_until: '2026-11-24T10:15:00.000Z',
  created_at: '2026-11-24T10:00:00.000Z',
};

/** A cross-border payment: the order in RUB, the payer paying TJS in Tajikistan. */
export const CROSS_BORDER_PAYMENT_EXAMPLE: Payment = {
  ...PAYMENT_EXAMPLE,
  id: '9d2e6b1a-4c7f-4a3e-8b5d-1f0c9e8d7a62',
  ext_id: 'order-1003',
  method: 'CROSS_BORDER',
  requisites: {
    type: 'card',
    value: '4439000012345677',
    bank: 'alif_bank',
    bank_code: 'alif_bank',
    bank_name: 'Алиф Банк',
    holder: 'Rustam K.',
    country: 'TJ',
    currency: 'TJS',
    amount_local: 172.5,
  },
};

export const ErrorBody = Type.Object({
  error: Type.String(),
  message: Type.String(),
  data: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

/** Maps a stored payment to the spec's Payment object (never the row as is). */
export function toPayment(row: PaymentView, paymentPageUrl: string): Payment {
  const requisites: Static<typeof Requisites> = {
    type: row.req_type,
    value: row.req_value,
    holder: row.req_holder,
  };
  if (row.req_bank_code) {
    requisites.bank = row.req_bank_code;
    requisites.bank_code = row.req_bank_code;
    if (row.req_bank_name) requisites.bank_name = row.req_bank_name;
  }
  if (row.cross_border) {
    requisites.country = row.req_country;
    requisites.currency = row.req_currency;
    requisites.amount_local = toNumber(row.payer_amount)!;
  }
  const payment: Payment = {
    id: row.id,
    ext_id: row.ext_id,
    amount: toNumber(row.amount)!,
    currency: row.currency,
    rate: toNumber(row.rate)!,
    payin_rate: toNumber(row.payin_rate)!,
    terminal_id: row.terminal_id,
    terminal_name: row.terminal_name,
    status: row.status,
    method: row.method,
    requisites,
    payment_url: `${paymentPageUrl}/${row.page_token}`,
    valid_until: row.valid_until.toISOString(),
    created_at: row.created_at.toISOString(),
  };
  // Beyond the spec's field list: an appeal may complete for another amount than ordered, and a
  // merchant (or an aggregator routing to us) needs to know which (DESIGN.md decision 7).
  if (row.status === 'COMPLETED_APPEAL' && row.received_amount !== null) payment.received_amount = toNumber(row.received_amount)!;
  return payment;
}
