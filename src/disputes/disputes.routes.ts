import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { ErrorBody } from '../payments/payments.schemas.js';
import { uploadRoute } from '../receipts/receipts.routes.js';
import { cancelDispute, openDispute } from './disputes.service.js';

const security = [{ identity: [], signature: [] }];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 500: ErrorBody };
const IdParams = Type.Object({ id: Type.String() });

const DisputeResponse = Type.Object({
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
});

/** `POST /v1/payments/{id}/dispute` and `/dispute/cancel` (merchant side). */
export async function disputeRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/v1/payments/:id/dispute',
    {
      config: uploadRoute,
      schema: {
        tags: ['disputes'],
        summary: 'Open a dispute on a cancelled payment',
        security,
        params: IdParams,
        consumes: ['application/json', 'multipart/form-data'],
        response: { 200: DisputeResponse, ...errors },
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
        security,
        params: IdParams,
        response: { 200: Type.Object({ id: Type.String(), ext_id: Type.String(), status: Type.String() }), ...errors },
      },
    },
    async (request) => cancelDispute(ctx, request.merchant!.merchantId, request.params.id),
  );
}
