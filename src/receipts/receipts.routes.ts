import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { attachReceipt } from '../disputes/disputes.service.js';
import { ErrorBody } from '../payments/payments.schemas.js';
import type { ReceiptRow } from './receipts.repo.js';
import { openReceiptFile, receiptUrl } from './receipts.service.js';
import { RECEIPT_FILES } from './upload.js';

const security = [{ identity: [], signature: [] }];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 413: ErrorBody, 500: ErrorBody };
const IdParams = Type.Object({ id: Type.String() });
/** An upload route of the merchant API: a receipt file, or JSON naming one. */
export const uploadRoute = { upload: RECEIPT_FILES, invalidCode: 'PAY_002', internalCode: 'PAY_001' } as const;
const ReceiptResponse = Type.Object({ id: Type.String(), ext_id: Type.String(), status: Type.String(), receipt_url: Type.String() });

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
        security,
        params: IdParams,
        consumes: ['application/json', 'multipart/form-data'],
        response: { 200: ReceiptResponse, ...errors },
      },
    },
    async (request) => {
      const upload = await request.readUpload();
      const { payment, receipt } = await attachReceipt(ctx, request.merchant!.merchantId, request.params.id, upload);
      return { id: payment.id, ext_id: payment.ext_id, status: payment.status, receipt_url: receiptUrl(ctx, receipt) };
    },
  );

  app.get('/v1/receipts/:id', { schema: { tags: ['payments'], summary: 'Download a stored receipt', security, params: IdParams } }, async (request, reply) => {
    const { receipt, content } = await openReceiptFile(ctx, request.merchant!.merchantId, request.params.id);
    return sendReceiptFile(reply, receipt, content);
  });
}
