import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { receiptUploadBody, uploadRoute } from '../receipts/receipts.routes.js';
import { receiptUrl } from '../receipts/receipts.service.js';
import { attachReceipt, cancelDispute, openDispute } from './disputes.service.js';

const security = [{ identity: [], signature: [] }];
const IdParams = Type.Object({ id: Type.String({ description: 'the payment id (UUID)' }) });
const notFound = { PAY_006: 'No payment with this id among the merchant’s' };

/** The payment, now in dispute, with the dispute: the merchant API's answer, and the merchant cabinet's. */
export const DisputeResponse = Type.Object(
  {
    id: Type.String(),
    ext_id: Type.String(),
    amount: Type.Number(),
    currency: Type.String(),
    status: Type.String(),
    method: Type.String(),
    dispute: Type.Object({
      amount: Type.Union([Type.Number(), Type.Null()]),
      receipt_url: Type.Union([Type.String(), Type.Null()]),
      comment: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String(),
    }),
    created_at: Type.String(),
  },
  {
    description: 'The payment, now in dispute, with the dispute',
    'x-examples': {
      opened: {
        summary: 'Dispute opened with a receipt link',
        value: {
          id: '5b4f0c7e-2a1d-4e8f-9c3b-7d6a5e4f3c21',
          ext_id: 'order-1001',
          amount: 1500,
          currency: 'RUB',
          status: 'dispute',
          method: 'CARD',
          dispute: {
            amount: 1500,
            receipt_url: 'https://shop.example.com/receipts/1001.pdf',
            comment: 'Paid at 10:07, the bank shows it sent',
            created_at: '2026-11-24T11:02:00.000Z',
          },
          created_at: '2026-11-24T10:00:00.000Z',
        },
      },
    },
  },
);

const ReceiptResponse = Type.Object(
  {
    id: Type.String(),
    ext_id: Type.String(),
    status: Type.String({ description: 'the payment status, unchanged' }),
    receipt_url: Type.String({
      description: 'for an uploaded file, its address in the service (`GET /v1/receipts/{id}`); for a link, the merchant’s own link',
    }),
  },
  {
    description: 'The receipt is attached',
    'x-examples': {
      file: {
        summary: 'An uploaded file',
        value: {
          id: '5b4f0c7e-2a1d-4e8f-9c3b-7d6a5e4f3c21',
          ext_id: 'order-1001',
          status: 'PENDING',
          receipt_url: 'https://kassir.example.com/v1/receipts/7c1d3e5f-8a9b-4c2d-9e0f-1a2b3c4d5e6f',
        },
      },
    },
  },
);

/**
 * `POST /v1/payments/{id}/receipt` (merchant side): a receipt attached to a payment, which in
 * dispute also goes onto the dispute card. Registered just before the receipt download
 * (receipts/receipts.routes.ts), as it was when both lived there.
 */
export async function paymentReceiptRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/v1/payments/:id/receipt',
    {
      config: uploadRoute,
      bodyLimit: 1024 * 1024,
      schema: {
        tags: ['payments'],
        summary: 'Attach a receipt (multipart file or JSON receipt_url)',
        description: `Attaches a receipt, independently of confirmation: a file (multipart/form-data, stored by the service and shown to the dispute reviewer) or a link (\`receipt_url\`). The status does not change.

Accepted while the payment is PENDING, DISPUTE, CANCELLED or CANCELLED_APPEAL. In dispute, the receipt also goes onto the dispute card unless the card already has one (an earlier receipt is never overwritten); for a dispute at an external provider it is forwarded there.`,
        security,
        params: IdParams,
        consumes: ['application/json', 'multipart/form-data'],
        documentedBody: receiptUploadBody(
          { receipt_url: Type.Optional(Type.String({ description: 'link to the receipt (absolute http(s) URL)' })) },
          { fileRequired: true, example: { receipt_url: 'https://shop.example.com/receipts/1001.pdf' } },
        ),
        response: { 200: ReceiptResponse },
        errors: {
          PAY_002: 'Neither a file nor `receipt_url`, or the `data` part is not a JSON object',
          PAY_006: 'No payment with this id among the merchant’s',
          PAY_008: 'A receipt cannot be attached in the payment’s status (COMPLETED, COMPLETED_APPEAL, PROCESSING); `data.status`',
          PAY_009: 'The receipt file is larger than 10 MB',
          PAY_010: 'The receipt is not a png, jpg/jpeg, webp, heic or pdf file',
        },
      },
    },
    async (request) => {
      const upload = await request.readUpload();
      const { payment, receipt } = await attachReceipt(ctx, request.merchant!.merchantId, request.params.id, upload);
      return { id: payment.id, ext_id: payment.ext_id, status: payment.status, receipt_url: receiptUrl(ctx, receipt) };
    },
  );
}

/** `POST /v1/payments/{id}/dispute` and `/dispute/cancel` (merchant side). */
export async function disputeRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/v1/payments/:id/dispute',
    {
      config: uploadRoute,
      schema: {
        tags: ['disputes'],
        summary: 'Open a dispute on a cancelled payment',
        description: `Opens a dispute on a payment the payer paid but that was cancelled: only from CANCELLED or CANCELLED_APPEAL (re-opening after a cancelled dispute works). JSON, or multipart/form-data when a receipt file is attached (the parameters then go as one JSON string in \`data\`).

When the payment was executed by an external provider, the dispute is opened there too, with the receipt (the uploaded file, or the file behind \`receipt_url\`). A receipt can also be sent later through \`POST /v1/payments/{id}/receipt\`, without re-opening.

Outcomes: DISPUTE while under review; COMPLETED when approved (funds credited; COMPLETED_APPEAL when for another amount); CANCELLED when rejected. Each change is sent to the payment's \`notify_url\`.`,
        security,
        params: IdParams,
        consumes: ['application/json', 'multipart/form-data'],
        documentedBody: receiptUploadBody(
          {
            amount: Type.Optional(Type.Number({ description: 'the amount actually paid, if different from the order' })),
            receipt_url: Type.Optional(Type.String({ description: 'link to a receipt or screenshot' })),
            comment: Type.Optional(Type.String({ maxLength: 2000 })),
          },
          {
            fileRequired: false,
            example: { amount: 1500, receipt_url: 'https://shop.example.com/receipts/1001.pdf', comment: 'Paid at 10:07, the bank shows it sent' },
          },
        ),
        response: { 200: DisputeResponse },
        errors: {
          ...notFound,
          PAY_002: 'Invalid parameters: `amount`, `comment` or `receipt_url`, or the `data` part is not a JSON object',
          DIS_001: 'The payment is neither CANCELLED nor CANCELLED_APPEAL (`data.status`)',
          DIS_002: 'A dispute is already open for this payment',
          PAY_009: 'The receipt file is larger than 10 MB',
          PAY_010: 'The receipt is not a png, jpg/jpeg, webp, heic or pdf file',
        },
      },
    },
    async (request) => openDispute(ctx, request.merchant!.merchantId, request.params.id, await request.readUpload()),
  );

  app.post(
    '/v1/payments/:id/dispute/cancel',
    {
      config: { invalidCode: 'PAY_002', internalCode: 'SYS_001' },
      schema: {
        tags: ['disputes'],
        summary: 'Cancel an open dispute',
        description: 'Cancels the active dispute; no body. Only from DISPUTE; the payment becomes CANCELLED_APPEAL, from which a dispute can be opened again.',
        security,
        params: IdParams,
        response: {
          200: Type.Object(
            { id: Type.String(), ext_id: Type.String(), status: Type.String() },
            {
              description: 'The dispute is cancelled',
              'x-examples': {
                cancelled: { summary: 'Cancelled', value: { id: '5b4f0c7e-2a1d-4e8f-9c3b-7d6a5e4f3c21', ext_id: 'order-1001', status: 'cancelled_appeal' } },
              },
            },
          ),
        },
        errors: { ...notFound, DIS_003: 'The payment is not in DISPUTE (`data.status`)' },
      },
    },
    async (request) => cancelDispute(ctx, request.merchant!.merchantId, request.params.id),
  );
}
