import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { receiptUploadBody, uploadRoute } from '../receipts/receipts.routes.js';
import { CONFIRM_MESSAGE, confirmPayment } from './confirm.service.js';
import { CROSS_BORDER_PAYMENT_EXAMPLE, CreatePaymentBody, PAYMENT_EXAMPLE, Payment, toPayment } from './payments.schemas.js';
import * as service from './payments.service.js';

const security = [{ identity: [], signature: [] }];
const paymentRoute = { invalidCode: 'PAY_002', internalCode: 'PAY_001' } as const;
const notFound = { PAY_006: 'No payment with this id (or ext_id) among the merchant’s' };

/** The answer of the create and the reads, with its examples in the API reference. */
const PaymentAnswer = {
  ...Payment,
  description: 'The payment',
  'x-examples': {
    card: { summary: 'RUB by card, PENDING', value: PAYMENT_EXAMPLE },
    crossBorder: { summary: 'Cross-border: the payer pays TJS', value: CROSS_BORDER_PAYMENT_EXAMPLE },
  },
};

const CREATE_DESCRIPTION = `Creates a payment and returns the requisites the payer transfers to: \`status\` PENDING, \`requisites\`, \`payment_url\` (the hosted payment page), \`valid_until\`, \`created_at\`, the \`rate\` of the order currency to USDT fixed for this deal and the \`payin_rate\`.

Methods by currency:

| currency | methods |
|---|---|
| RUB | CARD, SBP (by phone number), SBP_QR (QR code), SIM (top-up of a phone account) |
| KZT | CARD, PHONE, CROSS_BORDER, CROSS_BORDER_CARD |
| AZN | CARD, PHONE |
| TJS | CARD, CROSS_BORDER, CROSS_BORDER_CARD, CROSS_BORDER_SIM |

\`bank\` filters the requisites by bank code (an operator code for CROSS_BORDER_SIM); without it the bank is picked by cascade. For RUB the amount is 100 to 300,000.

**Cross-border** (CROSS_BORDER, CROSS_BORDER_CARD, CROSS_BORDER_SIM): the payer pays a bank or mobile operator in another \`country\` in its currency. When \`currency\` is not the requisites' currency (e.g. RUB, or omitted), \`requisites.amount_local\` is what the payer pays in \`requisites.currency\` and the order stays in the order currency; when it is the same (KZT for KZ, TJS for TJ), \`amount_local\` equals \`amount\`. Without \`country\` the requisites come from any available country.

With \`notify_url\`, every status change is posted there (see Webhooks), with \`notification_token\` in the \`X-Notification-Token\` header.`;

/** The merchant's payment endpoints (spec "Endpoints"); authentication is installed by the caller. */
export async function paymentRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const pageUrl = ctx.config.paymentPageUrl;

  app.post(
    '/v1/payments',
    {
      config: { ...paymentRoute, priority: 'low' },
      schema: {
        tags: ['payments'],
        summary: 'Create a payment',
        description: CREATE_DESCRIPTION,
        security,
        body: CreatePaymentBody,
        response: { 200: PaymentAnswer },
        errors: {
          PAY_002:
            'Invalid parameters: the message names the field; also an unsupported currency, method or country, a missing `currency` for CROSS_BORDER where required, or a `currency` other than the terminal’s',
          PAY_003: 'A payment with this `ext_id` already exists (`data.ext_id`)',
          PAY_004: 'No requisites are available for this currency, country, method and amount; retry later or try another method',
          PAY_005: 'Too many PENDING payments of this amount on the terminal: wait for one to finish or vary the amount',
        },
      },
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
        description: 'The payment with its current `status` (see the statuses under Payments). Another merchant’s payment is not found.',
        security,
        params: Type.Object({ id: Type.String({ description: 'the payment id (UUID)' }) }),
        response: { 200: PaymentAnswer },
        errors: notFound,
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
        description: 'The same answer as `GET /v1/payments/{id}`, found by the `ext_id` given at creation.',
        security,
        params: Type.Object({ extId: Type.String({ description: 'the merchant’s order id (`ext_id`)' }) }),
        response: { 200: PaymentAnswer },
        errors: notFound,
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
        description: `Signals that the payer has made the transfer; the status does not change (it stays PENDING until the transfer is verified). Every field is optional and an empty body is valid: a receipt file (multipart/form-data), or a \`receipt_url\` in a JSON body or in the \`data\` part; a receipt sent here is available to a dispute reviewer.

Two flows: the merchant shows the requisites itself and calls confirm when the payer says they paid; or the payer is sent to \`payment_url\`, whose "I paid" button calls confirm.`,
        security,
        params: Type.Object({ id: Type.String({ description: 'the payment id (UUID)' }) }),
        consumes: ['application/json', 'multipart/form-data'],
        documentedBody: receiptUploadBody(
          { receipt_url: Type.Optional(Type.String({ description: 'link to the receipt (absolute http(s) URL)' })) },
          { fileRequired: false, example: { receipt_url: 'https://shop.example.com/receipts/1001.pdf' } },
        ),
        response: {
          200: {
            ...Payment,
            description: 'The payment, still PENDING, with `message`',
            'x-examples': {
              confirmed: { summary: 'Confirmation received', value: { ...PAYMENT_EXAMPLE, message: CONFIRM_MESSAGE } },
            },
          },
        },
        errors: {
          ...notFound,
          PAY_002: 'The `data` part is not a JSON object, or `receipt_url` is not an absolute http(s) URL',
          PAY_008: 'The payment is not PENDING (`data.status` is its status)',
          PAY_009: 'The receipt file is larger than 10 MB',
          PAY_010: 'The receipt is not a png, jpg/jpeg, webp, heic or pdf file',
        },
      },
    },
    async (request) => {
      const upload = await request.readUpload();
      const payment = await confirmPayment(ctx, request.merchant!.merchantId, request.params.id, upload, 'merchant');
      return { ...toPayment(payment, pageUrl), message: CONFIRM_MESSAGE };
    },
  );
}
