/**
 * From the bytes on the wire to a parsed JSON value: the content type and encoding a
 * Segment client may use, gzip decompressed with a ceiling (a few KB of gzip can expand
 * to gigabytes, so decompression stops one byte past the request limit). The JSON itself
 * is read by `parseJsonBody` in `@tributary/shared/segment`, shared with the producer.
 */
import { gunzip } from 'node:zlib';
import { MAX_REQUEST_BYTES, requestTooLarge, type ApiError } from '@tributary/shared/segment';

/**
 * Raw bytes read from the socket before the request is refused with 413 without reading
 * further. Anything between MAX_REQUEST_BYTES and this is read and answered with a 400
 * that names the 500 KB limit; gzip bodies are limited again after decompression.
 */
export const MAX_RAW_BODY_BYTES = 5 * 1024 * 1024;

export type ContentEncoding = 'identity' | 'gzip';

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
