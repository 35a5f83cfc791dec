/**
 * Every admin API error has one JSON shape, `{"error", "code", "issues": [{path, message}]}`
 * (plus details such as the destinations that still use a source), whichever layer refused
 * the request: our own checks, config validation, or Fastify's body parsing.
 */
import type { z } from 'zod';
import { AdminError, ConfigValidationError, formatPath, type ValidationIssue } from '@tributary/shared';

// The shape itself lives in shared: the delivery-log indexer answers admin routes too.
export { AdminError, type AdminErrorBody } from '@tributary/shared';

export function invalid(what: string, issues: ValidationIssue[]): AdminError {
  const listed = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
  return new AdminError(400, 'invalid_request', `invalid ${what}: ${listed}`, issues);
}

export function notFound(kind: string, id: string): AdminError {
  return new AdminError(404, 'not_found', `${kind} "${id}" does not exist`);
}

/** Parses a request body with a zod schema, or throws a 400 naming each bad field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw invalid(
    what,
    result.error.issues.map((issue) => ({
      path: formatPath('', issue.path),
      message: issue.code === 'unrecognized_keys' ? `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` : issue.message,
    })),
  );
}

/** Fastify's body-parsing refusals under stable names of our own. */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
};

interface HttpErrorLike {
  statusCode?: unknown;
  code?: unknown;
  message?: unknown;
}

/**
 * The admin error for anything a handler or Fastify threw; undefined for failures that
 * are ours (answered 500 and logged by the caller).
 */
export function toAdminError(error: unknown, what = 'request'): AdminError | undefined {
  if (error instanceof AdminError) return error;
  if (error instanceof ConfigValidationError) return invalid(what, error.issues);
  const { statusCode, code, message } = (error ?? {}) as HttpErrorLike;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    // Fastify's own refusals: malformed JSON, unsupported media type, body too large.
    return new AdminError(statusCode, (typeof code === 'string' && FASTIFY_CODES[code]) || 'bad_request', typeof message === 'string' ? message : 'bad request');
  }
  return undefined;
}
