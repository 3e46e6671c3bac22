import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { textProblem } from '../lib/input.js';
import { ApiError } from './errors.js';
import { isMultipart } from '../receipts/upload.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request owns an Idempotency-Key and its answer is to be stored. */
    idempotencyKey?: string;
  }
}

/** How long a stored answer is replayed. */
const KEEP_HOURS = 24;

/**
 * `Idempotency-Key` on every signed POST (beyond the spec): the first answer to a key is stored
 * for 24 h and replayed for the same key; the same key with a different request (method, URL or
 * body bytes) answers 409, as does a key whose first request is still being answered. 5xx answers
 * are not stored, so a failed request can be retried with its key. Keys are per merchant.
 * Multipart uploads are not covered: their body is read by the route, after this check.
 */
export function idempotency(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || key === undefined || isMultipart(request) || !request.merchant || !request.signer) return;
    if (typeof key !== 'string' || key.length === 0 || key.length > 255 || textProblem(key, false)) {
      throw new ApiError(request.routeOptions.config.invalidCode ?? 'PAY_002', 'Idempotency-Key must be 1 to 255 printable characters');
    }
    // The calling terminal is part of the request: a payment or payout goes through the terminal of
    // the X-Identity key, so one key sent through two terminals is two different requests.
    const hash = createHash('sha256').update(request.signer.requestHash()).update(request.merchant.terminalId).digest();
    const merchantId = request.merchant.merchantId;
    // Claims the key, or takes over one whose stored answer has expired.
    const claimed = await ctx.db.query(
      `INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ($1, $2, $3)
       ON CONFLICT (merchant_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, status_code = NULL, response_body = NULL, created_at = now()
         WHERE idempotency_keys.created_at < now() - make_interval(hours => $4)
       RETURNING 1`,
      [merchantId, key, hash, KEEP_HOURS],
    );
    if (claimed.rowCount) {
      request.idempotencyKey = key;
      return;
    }
    const { rows } = await ctx.db.query<{ request_hash: Buffer; status_code: number | null; response_body: string | null }>(
      'SELECT request_hash, status_code, response_body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2',
      [merchantId, key],
    );
    const stored = rows[0];
    if (!stored) throw new ApiError('CONFLICT', 'The Idempotency-Key is being released; retry the request');
    if (!stored.request_hash.equals(hash)) {
      throw new ApiError('CONFLICT', 'This Idempotency-Key was already used for a different request', { idempotency_key: key });
    }
    if (stored.status_code === null) {
      throw new ApiError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry shortly', { idempotency_key: key });
    }
    return reply
      .status(stored.status_code)
      .header('content-type', 'application/json; charset=utf-8')
      .header('idempotent-replayed', 'true')
      .send(stored.response_body);
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const key = request.idempotencyKey;
    if (!key || !request.merchant) return payload;
    if (reply.statusCode >= 500) {
      await ctx.db.query('DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2', [request.merchant.merchantId, key]);
    } else {
      await ctx.db.query(
        'UPDATE idempotency_keys SET status_code = $3, response_body = $4 WHERE merchant_id = $1 AND key = $2',
        [request.merchant.merchantId, key, reply.statusCode, typeof payload === 'string' ? payload : JSON.stringify(payload ?? null)],
      );
    }
    return payload;
  });
}
