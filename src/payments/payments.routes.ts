import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { uploadRoute } from '../receipts/receipts.routes.js';
import { CONFIRM_MESSAGE, confirmPayment } from './confirm.service.js';
import { CreatePaymentBody, ErrorBody, Payment, toPayment } from './payments.schemas.js';
import * as service from './payments.service.js';

const security = [{ identity: [], signature: [] }];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody };
const paymentRoute = { invalidCode: 'PAY_002', internalCode: 'PAY_001' } as const;

/** The merchant's payment endpoints (spec "Endpoints"); authentication is installed by the caller. */
export async function paymentRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const pageUrl = ctx.config.paymentPageUrl;

  app.post(
    '/v1/payments',
    {
      config: { ...paymentRoute, priority: 'low' },
      schema: { tags: ['payments'], summary: 'Create a payment', security, body: CreatePaymentBody, response: { 200: Payment, ...errors } },
    },
    async (request) => {
      return toPayment(await service.createPayment(ctx, request.merchant!, request.body), pageUrl);
    },
  );

  app.get(
    '/v1/payments/:id',
    {
      config: paymentRoute,
      schema: {
        tags: ['payments'],
        summary: 'Get a payment by ID',
        security,
        params: Type.Object({ id: Type.String() }),
        response: { 200: Payment, ...errors },
      },
    },
    async (request) => toPayment(await service.getPayment(ctx, request.merchant!.merchantId, request.params.id), pageUrl),
  );

  app.get(
    '/v1/payments/by-ext-id/:extId',
    {
      config: paymentRoute,
      schema: {
        tags: ['payments'],
        summary: 'Get a payment by merchant order ID',
        security,
        params: Type.Object({ extId: Type.String() }),
        response: { 200: Payment, ...errors },
      },
    },
    async (request) => toPayment(await service.getPaymentByExtId(ctx, request.merchant!.merchantId, request.params.extId), pageUrl),
  );

  app.post(
    '/v1/payments/:id/confirm',
    {
      config: uploadRoute,
      schema: {
        tags: ['payments'],
        summary: 'Signal that the payer has transferred (optionally with a receipt)',
        security,
        params: Type.Object({ id: Type.String() }),
        consumes: ['application/json', 'multipart/form-data'],
        response: { 200: Payment, ...errors, 413: ErrorBody },
      },
    },
    async (request) => {
      const upload = await request.readUpload();
      const payment = await confirmPayment(ctx, request.merchant!.merchantId, request.params.id, upload, 'merchant');
      return { ...toPayment(payment, pageUrl), message: CONFIRM_MESSAGE };
    },
  );
}
