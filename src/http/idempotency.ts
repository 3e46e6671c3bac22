import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { DomainError, type ErrorKey } from '../errors.js';
import type { OperatorActor } from '../lib/actor.js';
import { textProblem } from '../lib/input.js';
import { claimKey, findStoredKey, type KeyStore, MERCHANT_KEYS, OPERATOR_KEYS, releaseKey, storeAnswer } from './idempotency.repo.js';
import { isMultipart } from './multipart.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request holds the claim on an Idempotency-Key and its answer is to be stored. */
    idempotency?: IdempotentRequest;
  }
  interface FastifyContextConfig {
    /** An operator route that moves money: it takes an Idempotency-Key (operatorIdempotency below). */
    idempotencyKey?: boolean;
  }
}

/** A request that holds the claim on its Idempotency-Key. */
export interface IdempotentRequest {
  /** Where the key is kept, and whose it is (a merchant; the operator token or a person). */
  store: KeyStore;
  ownerId: string;
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
    // The calling terminal is part of the request: a payment or payout goes through the terminal of
    // the X-Identity key, so one key sent through two terminals is two different requests.
    const hash = createHash('sha256').update(request.signer.requestHash()).update(request.merchant.terminalId).digest();
    const invalidCode = request.routeOptions.config.invalidCode ?? 'PAY_002';
    return answerOnce(ctx, request, reply, { store: MERCHANT_KEYS, ownerId: request.merchant.merchantId, key, hash, invalidCode });
  });
  app.addHook('onSend', keepAnswer(ctx));
}

/** Whose keys an operator-side caller's are: the bearer token's, or one person's. */
function keyOwner(actor: OperatorActor): string {
  return actor.kind === 'token' ? 'token' : `user:${actor.id}`;
}

/**
 * `Idempotency-Key` on the operator API's money routes (`config.idempotencyKey`: adjustments of
 * terminals and executors, payout and withdrawal completion or failure, dispute decisions, a
 * payment's cancellation, linking a notification), as on the merchant API: optional; the first
 * answer to a key is kept for 24 h and replayed; the same key with another request (method, URL
 * or JSON body) answers 409, as does a key whose first request is still being answered. Keys
 * belong to who sent them — the bearer token, or each person signed in — so that two people
 * never meet on one key. Authentication and the confirmation a risky route asks for come first
 * and are never stored: a request refused there is sent again with the same key.
 *
 * A claim taken over after its lease (its process died before the answer was stored) repeats the
 * request: a completion, failure, decision or cancellation already made is refused by its status
 * guard, and an adjustment records the key's request id as its posting's cause
 * (ledger_transactions_once), so the retry finds it and posts nothing: nothing moves twice.
 */
export function operatorIdempotency(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key'];
    // A multipart upload (the cabinet's dispute with its receipt) is not covered, as on the merchant
    // API: its body is read by the route, after this check; its status guard makes a repeat harmless.
    if (key === undefined || !request.routeOptions.config.idempotencyKey || !request.actor || isMultipart(request)) return;
    const hash = createHash('sha256')
      .update(`${request.method}\n${request.url}\n`)
      .update(JSON.stringify(request.body ?? null))
      .digest();
    return answerOnce(ctx, request, reply, { store: OPERATOR_KEYS, ownerId: keyOwner(request.actor), key, hash, invalidCode: 'VALIDATION' });
  });
  app.addHook('onSend', keepAnswer(ctx));
}

/**
 * Claims the key for this request (which then goes on, its answer stored by keepAnswer), or
 * answers in its place: the stored answer of the same request, or 409 for another request or one
 * still being answered.
 */
async function answerOnce(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  held: { store: KeyStore; ownerId: string; key: string | string[]; hash: Buffer; invalidCode: ErrorKey },
): Promise<FastifyReply | undefined> {
  const { store, ownerId, key, hash } = held;
  if (typeof key !== 'string' || key.length === 0 || key.length > 255 || textProblem(key, false)) {
    throw new DomainError(held.invalidCode, 'Idempotency-Key must be 1 to 255 printable characters');
  }
  const claim = await claimKey(ctx.db, store, { ownerId, key, requestHash: hash }, KEEP_HOURS, CLAIM_LEASE_SECONDS);
  if (claim) {
    request.idempotency = { store, ownerId, key, claim: claim.claim, requestId: claim.request_id };
    return undefined;
  }
  const stored = await findStoredKey(ctx.db, store, ownerId, key, CLAIM_LEASE_SECONDS);
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
}

/** The onSend hook that stores the answer of a request holding its key's claim (5xx: frees the key instead). */
function keepAnswer(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const held = request.idempotency;
    if (!held) return payload;
    // Once: an error answer produced by this hook would come through it again.
    request.idempotency = undefined;
    try {
      if (reply.statusCode >= 500) {
        await releaseKey(ctx.db, held.store, held.ownerId, held.key, held.claim);
      } else {
        const body = typeof payload === 'string' ? payload : JSON.stringify(payload ?? null);
        await storeAnswer(ctx.db, held.store, held.ownerId, held.key, held.claim, reply.statusCode, body);
      }
    } catch (err) {
      // The answer stands (what it reports has happened or not, whatever becomes of the key);
      // unstored, the key's claim is taken over by a retry once its lease ends.
      request.log.warn({ err, idempotency_key: held.key }, 'could not store the answer of an Idempotency-Key; a retry takes its claim over after the lease');
    }
    return payload;
  };
}
