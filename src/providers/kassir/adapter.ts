import { randomBytes } from 'node:crypto';
import { constantTimeEqual, hmacSha1Base64 } from '../../lib/crypto.js';
import { InputProblem, parseJson } from '../../lib/input.js';
import {
  type CreatePaymentRequest,
  type CreatePayoutRequest,
  type DisputeRequest,
  type ProviderAdapter,
  type ProviderCallback,
  ProviderError,
  type ProviderPayment,
  type ProviderPayout,
  type ReceiptFile,
} from '../provider.js';

export interface KassirProviderSettings {
  baseUrl: string;
  apiKey: string;
  secretKey: string;
  /** Per-call limit when the caller gives no signal. */
  timeoutMs: number;
}

/**
 * A provider that speaks spec/merchant-api.md — another Kassir, or any aggregator with that API.
 * We are its merchant: every request is signed `base64(HMAC-SHA1(secret, METHOD + URL + BODY))`,
 * and its webhooks are signed `base64(HMAC-SHA1(secret, BODY))` (DESIGN.md decisions 2 and 9).
 */
export function kassirProvider(settings: KassirProviderSettings): ProviderAdapter {
  const base = settings.baseUrl.replace(/\/+$/, '');

  async function call<T>(
    method: 'GET' | 'POST',
    path: string,
    body: Buffer | string | undefined,
    contentType: string | undefined,
    signal?: AbortSignal,
  ): Promise<T> {
    const url = base + path;
    const raw = body === undefined ? '' : body;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          'x-identity': settings.apiKey,
          'x-signature': hmacSha1Base64(settings.secretKey, method + url, raw),
          ...(contentType ? { 'content-type': contentType } : {}),
        },
        body: body === undefined ? undefined : new Uint8Array(typeof body === 'string' ? Buffer.from(body) : body),
        signal: signal ?? AbortSignal.timeout(settings.timeoutMs),
        redirect: 'manual',
      });
    } catch (err) {
      const reason = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError') ? 'timed out' : 'could not be reached';
      throw new ProviderError('unavailable', `provider ${reason}: ${method} ${path}`);
    }
    const text = await response.text();
    // An upstream answer is input from outside like a request body: the same rules (src/lib/input.ts)
    // keep a NUL in a holder's name or an inexact amount out of our database and arithmetic.
    let json: unknown;
    let unreadable: string | undefined;
    try {
      json = text === '' ? undefined : parseJson(text);
    } catch (err) {
      if (!(err instanceof InputProblem)) throw err;
      unreadable = err.message;
    }
    if (response.status >= 500) {
      const code = (json as { error?: string } | undefined)?.error;
      // "No requisites" is the provider declining, not the provider failing.
      if (code === 'PAY_004') throw new ProviderError('declined', 'provider has no requisites for this payment', code);
      throw new ProviderError('unavailable', `provider answered ${response.status} to ${method} ${path}`, code);
    }
    if (response.status >= 300) {
      const error = json as { error?: string; message?: string } | undefined;
      throw new ProviderError(
        response.status === 429 ? 'declined' : 'rejected',
        `provider refused ${method} ${path}: ${error?.error ?? response.status} ${error?.message ?? ''}`.trim(),
        error?.error,
      );
    }
    if (unreadable) throw new ProviderError('unavailable', `provider's answer to ${method} ${path} cannot be taken: ${unreadable}`);
    if (json === undefined || typeof json !== 'object')
      throw new ProviderError('unavailable', `provider answered ${method} ${path} with something that is not JSON`);
    return json as T;
  }

  const json = (value: unknown) => JSON.stringify(value);

  function multipart(fields: Record<string, string>, file?: ReceiptFile): { body: Buffer; contentType: string } {
    const boundary = `kassir-${randomBytes(12).toString('hex')}`;
    const parts: Buffer[] = [];
    for (const [name, value] of Object.entries(fields)) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    }
    if (file) {
      parts.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="receipt"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
        ),
        file.content,
        Buffer.from('\r\n'),
      );
    }
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
  }

  const paymentPath = (id: string) => `/v1/payments/${encodeURIComponent(id)}`;

  return {
    async createPayment(request: CreatePaymentRequest, signal: AbortSignal): Promise<ProviderPayment> {
      const body: Record<string, unknown> = {
        ext_id: request.extId,
        amount: Number(request.amount),
        currency: request.currency,
        method: request.method,
        notify_url: request.notifyUrl,
        notification_token: request.notificationToken,
      };
      if (request.bank) body.bank = request.bank;
      if (request.country) body.country = request.country;
      if (request.clientId) body.client_id = request.clientId;
      return call<ProviderPayment>('POST', '/v1/payments', json(body), 'application/json', signal);
    },

    getPayment: (id, signal) => call<ProviderPayment>('GET', paymentPath(id), undefined, undefined, signal),

    parseCallback(headers, body): ProviderCallback {
      const signature = headers['x-signature'];
      if (typeof signature !== 'string' || !constantTimeEqual(hmacSha1Base64(settings.secretKey, body), signature)) {
        throw new ProviderError('rejected', 'callback signature does not match the provider secret');
      }
      let event: { event?: unknown; id?: unknown; data?: unknown };
      try {
        event = parseJson(body.toString('utf8')) as typeof event;
      } catch (err) {
        if (!(err instanceof InputProblem)) throw err;
        throw new ProviderError('rejected', `callback body cannot be taken: ${err.message}`);
      }
      if (
        typeof event !== 'object' ||
        event === null ||
        typeof event.event !== 'string' ||
        typeof event.id !== 'string' ||
        typeof event.data !== 'object' ||
        event.data === null
      ) {
        throw new ProviderError('rejected', 'callback is not a webhook event {event, id, data}');
      }
      const token = headers['x-notification-token'];
      const resourceType = event.event.startsWith('payout.') ? 'payout' : 'payment';
      return {
        eventId: event.id,
        event: event.event,
        notificationToken: typeof token === 'string' ? token : undefined,
        resourceType,
        ...(resourceType === 'payout' ? { payout: event.data as ProviderPayout } : { payment: event.data as ProviderPayment }),
      };
    },

    async openDispute(id: string, dispute: DisputeRequest, signal?: AbortSignal): Promise<void> {
      const params: Record<string, unknown> = {};
      if (dispute.amount !== undefined) params.amount = dispute.amount;
      if (dispute.comment !== undefined) params.comment = dispute.comment;
      if (dispute.receipt) {
        const form = multipart({ data: json(params) }, dispute.receipt);
        await call('POST', `${paymentPath(id)}/dispute`, form.body, form.contentType, signal);
      } else {
        await call('POST', `${paymentPath(id)}/dispute`, json(params), 'application/json', signal);
      }
    },

    async sendReceipt(id: string, receipt: ReceiptFile, signal?: AbortSignal): Promise<void> {
      const form = multipart({}, receipt);
      await call('POST', `${paymentPath(id)}/receipt`, form.body, form.contentType, signal);
    },

    async cancelDispute(id: string, signal?: AbortSignal): Promise<void> {
      await call('POST', `${paymentPath(id)}/dispute/cancel`, undefined, undefined, signal);
    },

    async createPayout(request: CreatePayoutRequest, signal: AbortSignal): Promise<ProviderPayout> {
      const body: Record<string, unknown> = {
        ext_id: request.extId,
        amount: Number(request.amount),
        method: request.method,
        requisites: request.requisites,
        holder_name: request.holderName,
        notify_url: request.notifyUrl,
      };
      if (request.bank) body.bank = request.bank;
      return call<ProviderPayout>('POST', '/v1/payouts', json(body), 'application/json', signal);
    },

    getPayout: (id, signal) => call<ProviderPayout>('GET', `/v1/payouts/${encodeURIComponent(id)}`, undefined, undefined, signal),
  };
}
