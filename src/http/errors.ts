import type { DomainError, ErrorKey } from '../errors.js';

/**
 * The HTTP status of every key of the domain's error catalogue (src/errors.ts): typed over all keys,
 * so a new key does not compile until it has one. Bodies are the spec's `{error, message, data?}`.
 */
export const HTTP_STATUS: { [K in ErrorKey]: number } = {
  PAY_001: 500,
  PAY_002: 400,
  PAY_003: 409,
  PAY_004: 503,
  PAY_005: 429,
  PAY_006: 404,
  PAY_008: 400,
  PAY_009: 400,
  PAY_010: 400,
  PAYOUT_NOT_FOUND: 404,
  DIS_001: 400,
  DIS_002: 409,
  DIS_003: 400,
  WDR_001: 400,
  WDR_002: 400,
  WDR_003: 404,
  TRF_001: 400,
  TRF_002: 404,
  TRF_003: 400,
  DEPOSIT_SHORT: 409,
  SYS_001: 500,
  AUTH_001: 401,
  AUTH_002: 401,
  AUTH_003: 403,
  CONFIRM_REQUIRED: 403,
  WRONG_CODE: 400,
  PASSWORD_CHANGE_REQUIRED: 403,
  LIVE_OBJECT: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  REQUEST_TIMEOUT: 408,
  HEADERS_TOO_LARGE: 431,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  VALIDATION: 400,
  CONFLICT: 409,
  FORM_REFUSED: 422,
  UNAVAILABLE: 503,
  TELEGRAM_OFF: 503,
};

export interface ErrorBody {
  error: string;
  message: string;
  data?: Record<string, unknown>;
}

/** The status a domain error is answered with. */
export function statusOf(error: DomainError): number {
  return HTTP_STATUS[error.key];
}

/** The spec's error body of a domain error. */
export function errorBody(error: DomainError): ErrorBody {
  return error.data === undefined ? { error: error.code, message: error.message } : { error: error.code, message: error.message, data: error.data };
}
