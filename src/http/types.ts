import type { ErrorKey } from '../errors.js';
import type { MerchantIdentity } from '../merchants/identity.service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The catalogue code answered for a request that fails validation (default VALIDATION). */
    invalidCode?: ErrorKey;
    /** The catalogue code answered for an unexpected failure (default SYS_001). */
    internalCode?: ErrorKey;
    /**
     * The route takes multipart uploads under this policy (the feature's limits and types); it
     * reads them with request.readUpload(), which checks the signature of a signed route.
     */
    upload?: import('./multipart.js').UploadPolicy;
    /**
     * Answers the route's failures itself instead of with the spec's JSON body (the payment page:
     * a page in the payer's language), given the edge's status of each domain error.
     */
    renderError?: (
      error: import('fastify').FastifyError | import('../errors.js').DomainError,
      request: import('fastify').FastifyRequest,
      reply: import('fastify').FastifyReply,
      statusOf: (error: import('../errors.js').DomainError) => number,
    ) => import('fastify').FastifyReply;
    /** Every body of the route is signed (the merchant API, set by merchantAuth). */
    signed?: boolean;
    /**
     * Which requests go first under overload (src/http/overload.ts): `low` (starting new money:
     * payment, payout and withdrawal creates) is refused first, `high` (completing money already
     * on its way: executors, provider callbacks, the payment page) never; `normal` when unset.
     */
    priority?: import('./overload.js').Priority;
    /**
     * The route's answer carries a secret (a key, a token, a password, a two-factor secret or
     * recovery codes, a CSRF token): it is answered with `Cache-Control: no-store`, so no browser
     * or proxy keeps it (test/answer-checks.ts finds any such answer without it).
     */
    secret?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated merchant and terminal (merchant API only). */
    merchant?: MerchantIdentity;
    /** Set by the signing stream in preParsing; finished in preValidation. */
    signer?: import('./signature.js').BodySigner;
    /** The merchant a merchant's person acts for (the merchant cabinet's API, /merchant/v1, only). */
    merchantAccount?: string;
    /** Refused for overload before it was read (src/http/overload.ts): its answer was written straight to the socket. */
    shed?: boolean;
    /** The authenticated executor (executor API only). */
    executor?: import('../executors/executors.repo.js').ExecutorIdentity;
    /**
     * Reads the body of an upload route (config `upload`): JSON, or multipart with its file
     * streamed to the file store; on a signed route the signature is checked before anything is used.
     */
    readUpload(): Promise<import('../receipts/upload.js').UploadInput>;
  }
}
