/**
 * The one closed catalogue of errors: every failure the service reports is one of these codes,
 * answered with the spec's error body `{error, message, data?}` and the HTTP status listed here.
 * Spec codes come from spec/merchant-api.md "Errors"; AUTH_* from DESIGN.md decision 3; the rest
 * cover what the spec leaves open (unknown routes, oversized bodies, the operator API).
 */
export const ERRORS = {
  PAY_001: { status: 500, message: 'Internal error' },
  PAY_002: { status: 400, message: 'Invalid parameters' },
  PAY_003: { status: 409, message: 'ext_id already exists' },
  PAY_004: { status: 503, message: 'No available requisites' },
  PAY_005: { status: 429, message: 'Too many payments with the same amount' },
  PAY_006: { status: 404, message: 'Payment not found' },
  PAY_008: { status: 400, message: 'Payment is not in a status that allows this action' },
  PAY_009: { status: 400, message: 'Receipt file is larger than 10 MB' },
  PAY_010: { status: 400, message: 'Unsupported receipt file format' },
  PAYOUT_NOT_FOUND: { status: 404, message: 'Payout not found', code: 'PAY_001' },
  DIS_001: { status: 400, message: 'A dispute can be opened only for a CANCELLED or CANCELLED_APPEAL payment' },
  DIS_002: { status: 409, message: 'A dispute already exists for this payment' },
  DIS_003: { status: 400, message: 'A dispute can be cancelled only from DISPUTE' },
  WDR_001: { status: 400, message: 'Invalid withdrawal parameters' },
  WDR_002: { status: 400, message: 'Insufficient funds' },
  WDR_003: { status: 404, message: 'Withdrawal not found' },
  TRF_001: { status: 400, message: 'Invalid transfer parameters' },
  TRF_002: { status: 404, message: 'Terminal not found' },
  TRF_003: { status: 400, message: 'Insufficient funds on the source terminal' },
  SYS_001: { status: 500, message: 'Internal error' },
  AUTH_001: { status: 401, message: 'Authentication headers are missing' },
  AUTH_002: { status: 401, message: 'Invalid API key or signature' },
  AUTH_003: { status: 403, message: 'Terminal is inactive' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Request body is too large' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported Content-Type; send application/json' },
  RATE_LIMITED: { status: 429, message: 'Too many requests' },
  VALIDATION: { status: 400, message: 'Invalid parameters' },
  CONFLICT: { status: 409, message: 'Conflict' },
  UNAVAILABLE: { status: 503, message: 'Service unavailable' },
} as const satisfies Record<string, { status: number; message: string; code?: string }>;

export type ErrorKey = keyof typeof ERRORS;

/** A domain failure with its catalogue entry; thrown anywhere, answered by the HTTP layer. */
export class ApiError extends Error {
  readonly key: ErrorKey;
  readonly data: Record<string, unknown> | undefined;
  /** Seconds after which the same request may succeed, sent as `Retry-After` (a temporary failure). */
  readonly retryAfter: number | undefined;

  constructor(key: ErrorKey, message?: string, data?: Record<string, unknown>, options: { retryAfter?: number } = {}) {
    super(message ?? ERRORS[key].message);
    this.key = key;
    this.data = data;
    this.retryAfter = options.retryAfter;
  }

  get status(): number {
    return ERRORS[this.key].status;
  }

  /** The wire code: usually the key itself; some keys share a spec code (payout not found = PAY_001). */
  get code(): string {
    const entry = ERRORS[this.key] as { code?: string };
    return entry.code ?? this.key;
  }

  body(): ErrorBody {
    return this.data === undefined
      ? { error: this.code, message: this.message }
      : { error: this.code, message: this.message, data: this.data };
  }
}

export interface ErrorBody {
  error: string;
  message: string;
  data?: Record<string, unknown>;
}
