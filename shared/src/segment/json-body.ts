/**
 * One JSON.parse of a Segment request body, as ingest reads it from the wire and the
 * producer library reads what it is given (after JSON.stringify): a UTF-8 byte-order mark
 * is tolerated, nesting past the limit is refused before anything parses or walks it.
 */
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import type { ApiError } from './api-error.js';
import { lineAndColumn, syntaxErrorOffset } from './json-syntax.js';

/** Levels around a message's fields: the batch object, its array, the message object. */
const ENVELOPE_DEPTH = 3;
/**
 * Levels around the shallowest free-form field: the body object (a single call's
 * `properties`, a batch's `context` or `integrations`). A body nesting at most
 * MAX_JSON_DEPTH + this cannot hold a field, nor merge into one, that nests deeper than
 * MAX_JSON_DEPTH (merging never nests deeper than its deepest part).
 */
const FIELD_DEPTH = 1;

export type ParsedBody =
  | {
      ok: true;
      value: unknown;
      /**
       * Every free-form field in the body, merged or not, is known to nest at most
       * MAX_JSON_DEPTH levels: prepareCall may skip checking each record (free-form-depth.ts).
       */
      fieldsWithinDepth: boolean;
    }
  | { ok: false; error: ApiError };

export function parseJsonBody(body: Buffer): ParsedBody {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') {
    return { ok: false, error: { status: 400, code: 'invalid_json', error: 'the request body is empty: send a JSON object' } };
  }
  // Found by a scan before anything parses or walks it: a body nesting thousands deep would
  // reach code that recurses, here or further down the pipeline. Nearly every body is
  // shallow, and one scan settles it; only a deeper one is scanned again, against the
  // limit a message's fields inside a batch would reach (each of its records is then
  // checked after merging).
  const fieldsWithinDepth = !nestsDeeperThan(text, MAX_JSON_DEPTH + FIELD_DEPTH);
  if (!fieldsWithinDepth && nestsDeeperThan(text, MAX_JSON_DEPTH + ENVELOPE_DEPTH)) {
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
    return { ok: true, value: JSON.parse(text) as unknown, fieldsWithinDepth };
  } catch (error) {
    return { ok: false, error: { status: 400, code: 'invalid_json', error: `the request body is not valid JSON: ${jsonProblem(error as Error, text)}` } };
  }
}

/**
 * V8's wording of a mistake it locates: a fixed phrase (`Expected ',' or ']' after array
 * element in JSON`, `Unexpected non-whitespace character after JSON`) and the offset.
 */
const LOCATED = /^([^"]*?)(?: in JSON)? at position (\d+)/;

/**
 * What is wrong with the text and where — a phrase, the offset, line and column — and never
 * any of the text itself: V8 quotes an excerpt of the body for an unexpected character
 * (`Unexpected token 'x', ..."ey":"wk_…"... is not valid JSON`), and the excerpt may hold the
 * write key, which answers and logs never do. Only V8's fixed phrases are kept (not its
 * `Unexpected token 'x'`, which quotes a character of the body); where V8 gives no offset, the
 * scan in json-syntax.ts finds it. Line and column are computed here, the same on every Node
 * version (V8 adds them from Node 22 on).
 */
function jsonProblem(error: Error, text: string): string {
  const located = LOCATED.exec(error.message);
  const offset = located ? Number(located[2]) : syntaxErrorOffset(text);
  const atEnd = offset === undefined || offset >= text.length;
  const phrase = located && !located[1]!.startsWith('Unexpected token') ? located[1]! : atEnd ? 'Unexpected end of JSON input' : 'Unexpected character';
  if (offset === undefined) return phrase;
  const { line, column } = lineAndColumn(text, offset);
  return `${phrase} at position ${offset} (line ${line} column ${column})`;
}
