import type { ErrorKey } from '../errors.js';
import type { MerchantIdentity } from '../merchants/merchants.auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The catalogue code answered for a request that fails validation (default VALIDATION). */
    invalidCode?: ErrorKey;
    /** The catalogue code answered for an unexpected failure (default SYS_001). */
    internalCode?: ErrorKey;
    /** The route takes multipart uploads; it reads them with readUpload, which checks the signature. */
    upload?: boolean;
    /**
     * More of the caller's terminal that the route needs, read in the same round trip as the
     * merchant's identity: SQL select-list items over `i.terminal_id`; they arrive, by column
     * name, in request.merchant.extras.
     */
    identityColumns?: string;
    /**
     * Which requests go first under overload (src/http/overload.ts): `low` (starting new money:
     * payment, payout and withdrawal creates) is refused first, `high` (completing money already
     * on its way: executors, provider callbacks, the payment page) never; `normal` when unset.
     */
    priority?: import('./overload.js').Priority;
  }
  interface FastifyRequest {
    /** The authenticated merchant and terminal (merchant API only). */
    merchant?: MerchantIdentity;
    /** Set by the signing stream in preParsing; finished in preValidation. */
    signer?: import('./signature.js').BodySigner;
    /** Who acts on the operator API, for the audit log. */
    operator?: string;
  }
}
