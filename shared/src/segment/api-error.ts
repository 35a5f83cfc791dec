/**
 * Every error the Segment API answers with has one JSON shape:
 * `{"success":false,"error":"<sentence>","code":"<snake_case>","message":"<sentence>", ...details}`,
 * so clients and people can read what was wrong without knowing which layer refused the request.
 *
 * `message` repeats `error` because the Segment libraries read it: analytics-python's
 * request.py raises its APIError from `payload['message']` on any non-2xx answer, and without
 * the key it fails with a KeyError, which it treats as retryable — a 400 was retried for
 * about 17 minutes while its queue waited behind it.
 */

export interface ApiError {
  status: number;
  code: string;
  /** A sentence a person can act on. Never contains a write key. */
  error: string;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export interface ErrorBody {
  success: false;
  error: string;
  code: string;
  /** The same sentence as `error`, under the name the Segment client libraries read. */
  message: string;
  [detail: string]: unknown;
}

export function isApiError(value: unknown): value is ApiError {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value) && 'status' in value && 'code' in value;
}

export function errorBody({ code, error, details }: ApiError): ErrorBody {
  return { success: false, error, code, message: error, ...details };
}

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 5;

export function unavailable(error: string): ApiError {
  return { status: 503, code: 'unavailable', error, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } };
}
