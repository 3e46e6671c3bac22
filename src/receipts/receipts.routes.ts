import type { FastifyReply } from 'fastify';
import { type TProperties, Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import type { ReceiptRow } from './receipts.repo.js';
import { openReceiptFile } from './receipts.service.js';
import { RECEIPT_FILES } from './upload.js';

const security = [{ identity: [], signature: [] }];
/** An upload route of the merchant API: a receipt file, or JSON naming one. */
export const uploadRoute = { upload: RECEIPT_FILES, invalidCode: 'PAY_002', internalCode: 'PAY_001' } as const;
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

/** The download of stored receipts (merchant side); attaching one is disputes.routes.ts's `paymentReceiptRoutes`. */
export async function receiptRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
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
