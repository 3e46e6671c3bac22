/**
 * Error codes the merchant API answers with: the spec's table ("Errors"), the authentication codes
 * of DESIGN.md decision 3, and the generic ones the service uses where the spec names none.
 * `HTTP_<status>` stands for an answer without Kassir's error body (a proxy's 502, say).
 */
export type KassirErrorCode =
  | 'PAY_001'
  | 'PAY_002'
  | 'PAY_003'
  | 'PAY_004'
  | 'PAY_005'
  | 'PAY_006'
  | 'PAY_008'
  | 'PAY_009'
  | 'PAY_010'
  | 'DIS_001'
  | 'DIS_002'
  | 'DIS_003'
  | 'WDR_001'
  | 'WDR_002'
  | 'WDR_003'
  | 'TRF_001'
  | 'TRF_002'
  | 'TRF_003'
  | 'SYS_001'
  | 'AUTH_001'
  | 'AUTH_002'
  | 'AUTH_003'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'UNAVAILABLE'
  | 'RATE_LIMITED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'VALIDATION'
  | `HTTP_${number}`
  // Any code a newer service may add, without losing completion on the known ones.
  | (string & {});

/** The service answered with an error: `{error, message, data?}` (spec "Errors"). */
export class KassirError extends Error {
  override readonly name = 'KassirError';
  /** The spec's code, e.g. `PAY_006`. */
  readonly code: KassirErrorCode;
  /** HTTP status of the answer. */
  readonly status: number;
  /** Context the service gave, e.g. `ext_id` for PAY_003, `status` for PAY_008, `available` for a short balance. */
  readonly data: Record<string, unknown> | undefined;
  /** `x-request-id` of the answer: quote it to the operator. */
  readonly requestId: string | undefined;
  /** Seconds from `Retry-After`, when the service sent it. */
  readonly retryAfter: number | undefined;

  constructor(init: {
    code: KassirErrorCode;
    status: number;
    message: string;
    data?: Record<string, unknown> | undefined;
    requestId?: string | undefined;
    retryAfter?: number | undefined;
  }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.data = init.data;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }
}

/**
 * No answer arrived: the connection failed, or the call ran past its timeout. Whether a POST took
 * effect is then unknown: repeat it with the same Idempotency-Key (or read it back by `ext_id`).
 */
export class KassirConnectionError extends Error {
  override readonly name = 'KassirConnectionError';
  readonly timedOut: boolean;

  constructor(message: string, options: { cause?: unknown; timedOut?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.timedOut = options.timedOut ?? false;
  }
}

/** A webhook that must not be trusted: bad signature, wrong notification token, or a body that is not an event. */
export class KassirWebhookError extends Error {
  override readonly name = 'KassirWebhookError';
}
