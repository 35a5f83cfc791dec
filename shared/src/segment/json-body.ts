/**
 * One JSON.parse of a Segment request body, as ingest reads it from the wire and the
 * producer library reads what it is given (after JSON.stringify): a UTF-8 byte-order mark
 * is tolerated, nesting past the limit is refused before anything parses or walks it.
 */
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import type { ApiError } from './api-error.js';

/** Levels around a message's fields: the batch object, its array, the message object. */
const ENVELOPE_DEPTH = 3;

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
