import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { textProblem } from '../lib/input.js';
import { claimKey, findStoredKey, releaseKey, storeAnswer } from './idempotency.repo.js';
import { isMultipart } from './multipart.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request holds the claim on an Idempotency-Key and its answer is to be stored. */
    idempotency?: IdempotentRequest;
  }
}

/** A request that holds the claim on its Idempotency-Key. */
export interface IdempotentRequest {
  key: string;
  /** This attempt's claim: only it stores the answer or frees the key. */
  claim: string;
  /**
   * The request the key stands for, the same for every attempt at it (a retry that takes an
   * abandoned claim over keeps it): withdrawals and transfers record it, so that an attempt finds
   * what an earlier one did.
   */
  requestId: string;
}

/** How long a stored answer is replayed. */
const KEEP_HOURS = 24;
/**
 * How long a claimed key with no answer belongs to its request; past this, a retry of the same
 * request takes the claim over. Longer than any request lasts (the pool waits 5 s at most for a
 * connection, a payment tries routes for 10 s at most): a claim this old belongs to a request
 * whose process died or whose answer could not be stored.
 */
export const CLAIM_LEASE_SECONDS = 30;

/**
 * `Idempotency-Key` on every signed POST (beyond the spec): the first answer to a key is stored
 * for 24 h and replayed for the same key; the same key with a different request (method, URL or
 * body bytes) answers 409, as does a key whose first request is still being answered (with
 * Retry-After). 5xx answers are not stored, so a failed request can be retried with its key. Keys
 * are per merchant. Multipart uploads are not covered: their body is read by the route, after this
 * check.
 *
 * A claim left without an answer for CLAIM_LEASE_SECONDS (its process was killed, or the database
 * went away before the answer was stored) is taken over by a retry of the same request, which is
 * then performed again: safely, because whatever the first attempt committed is found by its own
 * key — ext_id for payments and payouts (PAY_003), the request id for withdrawals and transfers
 * (the first attempt's answer), the status guards for confirm, receipts and disputes.
 */
export function idempotency(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || key === undefined || isMultipart(request) || !request.merchant || !request.signer) return;
    if (typeof key !== 'string' || key.length === 0 || key.length > 255 || textProblem(key, false)) {
      throw new DomainError(request.routeOptions.config.invalidCode ?? 'PAY_002', 'Idempotency-Key must be 1 to 255 printable characters');
    }
    // The calling terminal is part of the request: a payment or payout goes through the terminal of
    // the X-Identity key, so one key sent through two terminals is two different requests.
    const hash = createHash('sha256').update(request.signer.requestHash()).update(request.merchant.terminalId).digest();
    const merchantId = request.merchant.merchantId;
    const claim = await claimKey(ctx.db, { merchantId, key, requestHash: hash }, KEEP_HOURS, CLAIM_LEASE_SECONDS);
    if (claim) {
      request.idempotency = { key, claim: claim.claim, requestId: claim.request_id };
      return;
    }
    const stored = await findStoredKey(ctx.db, merchantId, key, CLAIM_LEASE_SECONDS);
    if (!stored) throw new DomainError('CONFLICT', 'The Idempotency-Key is being released; retry the request', undefined, { retryAfter: 1 });
    if (!stored.request_hash.equals(hash)) {
      throw new DomainError('CONFLICT', 'This Idempotency-Key was already used for a different request', { idempotency_key: key });
    }
    if (stored.status_code === null) {
      // Retry-After: when this attempt may take the claim over, should the first never answer.
      throw new DomainError(
        'CONFLICT',
        'A request with this Idempotency-Key is still being processed; retry shortly',
        { idempotency_key: key },
        { retryAfter: stored.lease_left },
      );
    }
    return reply
      .status(stored.status_code)
      .header('content-type', 'application/json; charset=utf-8')
      .header('idempotent-replayed', 'true')
      .send(stored.response_body);
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const held = request.idempotency;
    if (!held || !request.merchant) return payload;
    // Once: an error answer produced by this hook would come through it again.
    request.idempotency = undefined;
    try {
      if (reply.statusCode >= 500) {
        await releaseKey(ctx.db, request.merchant.merchantId, held.key, held.claim);
      } else {
        const body = typeof payload === 'string' ? payload : JSON.stringify(payload ?? null);
        await storeAnswer(ctx.db, request.merchant.merchantId, held.key, held.claim, reply.statusCode, body);
      }
    } catch (err) {
      // The answer stands (what it reports has happened or not, whatever becomes of the key);
      // unstored, the key's claim is taken over by a retry once its lease ends.
      request.log.warn({ err, idempotency_key: held.key }, 'could not store the answer of an Idempotency-Key; a retry takes its claim over after the lease');
    }
    return payload;
  });
}
