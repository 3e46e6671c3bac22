import type { FastifyReply } from 'fastify';
import { type TProperties, Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { attachReceipt } from '../disputes/disputes.service.js';
import type { ReceiptRow } from './receipts.repo.js';
import { openReceiptFile, receiptUrl } from './receipts.service.js';
import { RECEIPT_FILES } from './upload.js';

const security = [{ identity: [], signature: [] }];
const IdParams = Type.Object({ id: Type.String({ description: 'the payment id (UUID)' }) });
/** An upload route of the merchant API: a receipt file, or JSON naming one. */
export const uploadRoute = { upload: RECEIPT_FILES, invalidCode: 'PAY_002', internalCode: 'PAY_001' } as const;
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
 * How an upload route's body reads in the API reference (the route reads it itself, so it is
 * documented, never validated, from this): JSON with `fields`, or multipart/form-data with the
 * receipt file and the same fields as one JSON string in `data`. `fileRequired`: the route needs a
 * file or a `receipt_url`.
 */
export function receiptUploadBody(fields: TProperties, options: { fileRequired: boolean; example: Record<string, unknown> }) {
  const either = options.fileRequired ? ' At least one of `receipt` or a `receipt_url` is required.' : ' Every field is optional; an empty body is valid.';
  return {
    required: options.fileRequired,
    description: `JSON, or multipart/form-data with a receipt file: png, jpg/jpeg, webp, heic or pdf, up to 10 MB, judged by its content.${either}`,
    content: {
      'application/json': { schema: Type.Object(fields, { 'x-examples': { link: { summary: 'With a receipt link', value: options.example } } }) },
      'multipart/form-data': {
        schema: Type.Object({
          receipt: Type.Optional(
            Type.String({ contentMediaType: 'application/octet-stream', description: 'the receipt file (also accepted as `attachment`, `file` or `proof`)' }),
          ),
          data: Type.Optional(Type.String({ description: `the JSON fields as one JSON string, e.g. {"receipt_url": "https://…"}` })),
        }),
      },
    },
  };
}

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/heic': 'heic', 'application/pdf': 'pdf' };

/**
 * Sends a stored receipt as a download: never rendered inline by the browser, never sniffed into
 * another type (a file claiming to be a PDF cannot run as HTML on our origin).
 */
export async function sendReceiptFile(
  reply: FastifyReply,
  receipt: ReceiptRow,
  content: NodeJS.ReadableStream,
  options: { inline?: boolean } = {},
): Promise<FastifyReply> {
  // Inline only on request (the console shows a PDF in the browser's viewer); the file's own
  // sandboxing CSP and nosniff hold either way, and its type was checked by content at upload.
  const disposition = options.inline ? 'inline' : 'attachment';
  return reply
    .header('content-type', receipt.content_type ?? 'application/octet-stream')
    .header('content-disposition', `${disposition}; filename="receipt-${receipt.id}.${EXTENSIONS[receipt.content_type ?? ''] ?? 'bin'}"`)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'private, no-store')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .send(content);
}

/** `POST /v1/payments/{id}/receipt` and the download of stored receipts (merchant side). */
export async function receiptRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
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

  app.get(
    '/v1/receipts/:id',
    {
      schema: {
        tags: ['payments'],
        summary: 'Download a stored receipt',
        description: 'The file behind a `receipt_url` that the service answered for an upload, sent as an attachment.',
        security,
        params: Type.Object({ id: Type.String({ description: 'the receipt id (UUID)' }) }),
        produces: ['application/octet-stream'],
        response: { 200: { description: 'The receipt file (png, jpeg, webp, heic or pdf)', type: 'string', contentMediaType: 'application/octet-stream' } },
        errors: { NOT_FOUND: 'No stored receipt with this id among the merchant’s (an external link is not stored)' },
      },
    },
    async (request, reply) => {
      const { receipt, content } = await openReceiptFile(ctx, request.merchant!.merchantId, request.params.id);
      return sendReceiptFile(reply, receipt, content);
    },
  );
}
