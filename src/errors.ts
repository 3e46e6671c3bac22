/**
 * The one closed catalogue of what can go wrong, in the domain's terms: every failure the service
 * reports is one of these keys, thrown by features as a DomainError. Each has its default sentence
 * and, where it differs from the key, the code the merchant sees (the spec's codes: spec/merchant-api.md
 * "Errors"; AUTH_* from DESIGN.md decision 3; the rest cover what the spec leaves open). Only the
 * HTTP layer knows statuses and bodies (src/http/errors.ts), and the compiler makes it give every key one.
 */
export const ERRORS = {
  PAY_001: { message: 'Internal error' },
  PAY_002: { message: 'Invalid parameters' },
  PAY_003: { message: 'ext_id already exists' },
  PAY_004: { message: 'No available requisites' },
  PAY_005: { message: 'Too many payments with the same amount' },
  PAY_006: { message: 'Payment not found' },
  PAY_008: { message: 'Payment is not in a status that allows this action' },
  PAY_009: { message: 'Receipt file is larger than 10 MB' },
  PAY_010: { message: 'Unsupported receipt file format' },
  PAYOUT_NOT_FOUND: { message: 'Payout not found', code: 'PAY_001' },
  DIS_001: { message: 'A dispute can be opened only for a CANCELLED or CANCELLED_APPEAL payment' },
  DIS_002: { message: 'A dispute already exists for this payment' },
  DIS_003: { message: 'A dispute can be cancelled only from DISPUTE' },
  WDR_001: { message: 'Invalid withdrawal parameters' },
  WDR_002: { message: 'Insufficient funds' },
  WDR_003: { message: 'Withdrawal not found' },
  TRF_001: { message: 'Invalid transfer parameters' },
  TRF_002: { message: 'Terminal not found' },
  TRF_003: { message: 'Insufficient funds on the source terminal' },
  DEPOSIT_SHORT: { message: "The executor's deposit does not cover this", code: 'EXE_001' },
  SYS_001: { message: 'Internal error' },
  AUTH_001: { message: 'Authentication headers are missing' },
  AUTH_002: { message: 'Invalid API key or signature' },
  AUTH_003: { message: 'Terminal is inactive' },
  CONFIRM_REQUIRED: { message: 'Confirm it is you first: POST /auth/v1/confirm', code: 'AUTH_004' },
  // A wrong code or password inside a live session: not 401, which the web app reads as signed out.
  WRONG_CODE: { message: 'The code is wrong; try again', code: 'AUTH_005' },
  PASSWORD_CHANGE_REQUIRED: { message: 'Choose a new password first: POST /auth/v1/password', code: 'AUTH_006' },
  // Issue 33 item 4: the cabinet's test actions (complete, expire, decide a dispute, settle a payout) act on test objects only.
  LIVE_OBJECT: { message: 'Test actions are only for the payments and payouts of a test terminal', code: 'TEST_001' },
  NOT_FOUND: { message: 'Not found' },
  PAYLOAD_TOO_LARGE: { message: 'Request body is too large' },
  REQUEST_TIMEOUT: { message: 'The request did not arrive in time' },
  HEADERS_TOO_LARGE: { message: 'The request headers are too large' },
  UNSUPPORTED_MEDIA_TYPE: { message: 'Unsupported Content-Type; send application/json' },
  RATE_LIMITED: { message: 'Too many requests' },
  VALIDATION: { message: 'Invalid parameters' },
  CONFLICT: { message: 'Conflict' },
  // A taught message form that would credit a negative line or change what a message read (data.offending).
  FORM_REFUSED: { message: 'The form would read existing texts wrongly', code: 'FORM_001' },
  UNAVAILABLE: { message: 'Service unavailable' },
  // Issue 37: linking a chat needs the bot, which is off until the operator gives its token.
  TELEGRAM_OFF: { message: 'Telegram is not configured (operator: set TELEGRAM_BOT_TOKEN)', code: 'TG_001' },
} as const satisfies Record<string, { message: string; code?: string }>;

export type ErrorKey = keyof typeof ERRORS;

/** A failure with its catalogue entry: thrown by any feature, answered by the HTTP layer. */
export class DomainError extends Error {
  readonly key: ErrorKey;
  readonly data: Record<string, unknown> | undefined;
  /** Seconds after which the same request may succeed (a temporary failure); HTTP sends it as `Retry-After`. */
  readonly retryAfter: number | undefined;

  constructor(key: ErrorKey, message?: string, data?: Record<string, unknown>, options: { retryAfter?: number } = {}) {
    super(message ?? ERRORS[key].message);
    this.key = key;
    this.data = data;
    this.retryAfter = options.retryAfter;
  }

  /** The code the caller sees: usually the key itself; some keys share a spec code (payout not found = PAY_001). */
  get code(): string {
    const entry = ERRORS[this.key] as { code?: string };
    return entry.code ?? this.key;
  }
}
