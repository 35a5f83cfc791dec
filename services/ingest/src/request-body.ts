/**
 * From the bytes on the wire to a parsed JSON value: the content type and encoding a
 * Segment client may use, gzip decompressed with a ceiling (a few KB of gzip can expand
 * to gigabytes, so decompression stops one byte past the request limit), and one
 * JSON.parse of the whole body.
 */
import { gunzip } from 'node:zlib';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '@tributary/shared';
import type { ApiError } from './api-error.js';
import { MAX_REQUEST_BYTES, requestTooLarge } from './validation.js';

/**
 * Raw bytes read from the socket before the request is refused with 413 without reading
 * further. Anything between MAX_REQUEST_BYTES and this is read and answered with a 400
 * that names the 500 KB limit; gzip bodies are limited again after decompression.
 */
export const MAX_RAW_BODY_BYTES = 5 * 1024 * 1024;

export type ContentEncoding = 'identity' | 'gzip';

/** Levels around a message's fields: the batch object, its array, the message object. */
const ENVELOPE_DEPTH = 3;

export function contentEncoding(header: string | undefined): ContentEncoding | ApiError {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  return {
    status: 415,
    code: 'unsupported_content_encoding',
    error: `Content-Encoding ${JSON.stringify(header)} is not supported: send the body uncompressed or with Content-Encoding: gzip`,
  };
}

/**
 * `application/json` with any parameters, or `text/plain` (analytics.js in browsers sends
 * JSON as text/plain so that the request needs no CORS preflight).
 */
export function checkContentType(header: string | undefined): ApiError | undefined {
  const mediaType = (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (mediaType === 'application/json' || mediaType === 'text/plain') return undefined;
  const given = header === undefined || header.trim() === '' ? 'no Content-Type' : `Content-Type ${JSON.stringify(header)}`;
  return {
    status: 415,
    code: 'unsupported_media_type',
    error: `${given}: send the JSON body with Content-Type: application/json`,
  };
}

function gunzipCapped(raw: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    gunzip(raw, { maxOutputLength: MAX_REQUEST_BYTES + 1 }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** The request body decompressed and within MAX_REQUEST_BYTES, or the error to answer. */
export async function decodeBody(raw: Buffer, encoding: ContentEncoding): Promise<Buffer | ApiError> {
  if (encoding === 'identity') return raw.length > MAX_REQUEST_BYTES ? requestTooLarge(raw.length) : raw;
  let decoded: Buffer;
  try {
    decoded = await gunzipCapped(raw);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return requestTooLarge();
    return {
      status: 400,
      code: 'invalid_gzip',
      error: `the body is not valid gzip (Content-Encoding: gzip was sent): ${(error as Error).message}`,
    };
  }
  return decoded.length > MAX_REQUEST_BYTES ? requestTooLarge() : decoded;
}

/** One JSON.parse of the body; a UTF-8 byte-order mark is tolerated. */
export function parseJsonBody(body: Buffer): { ok: true; value: unknown } | { ok: false; error: ApiError } {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') {
    return { ok: false, error: { status: 400, code: 'invalid_json', error: 'the request body is empty: send a JSON object' } };
  }
  // Found by a scan before anything parses or walks it: a body nesting thousands deep would
  // reach code that recurses, here or further down the pipeline.
  if (nestsDeeperThan(text, MAX_JSON_DEPTH + ENVELOPE_DEPTH)) {
    return {
      ok: false,
      error: {
        status: 400,
        code: 'too_deep',
        error: `the request nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep inside a message; flatten properties, traits and context`,
        details: { limit: MAX_JSON_DEPTH },
      },
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: { status: 400, code: 'invalid_json', error: `the request body is not valid JSON: ${jsonProblem(error as Error)}` } };
  }
}

/**
 * V8's message without the excerpt of the body it quotes (`Unexpected token 'x', "{…" is
 * not valid JSON`): the excerpt may hold the write key, and answers and logs never do.
 */
function jsonProblem(error: Error): string {
  const quoted = error.message.indexOf(', "');
  return quoted >= 0 && error.message.endsWith('is not valid JSON') ? error.message.slice(0, quoted) : error.message;
}
