import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../json-depth.js';
import { isApiError } from './api-error.js';
import { parseJsonBody } from './json-body.js';

/** A JSON object nesting `levels` objects deep, itself included. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level++) value = { a: value };
  return value;
}

describe('parseJsonBody', () => {
  it('parses JSON, tolerating a byte-order mark', () => {
    expect(parseJsonBody(Buffer.from('\uFEFF{"a":1}'))).toEqual({ ok: true, value: { a: 1 }, fieldsWithinDepth: true });
  });

  it('says whether the body is shallow enough that no free-form field in it can nest past the limit', () => {
    const parse = (properties: unknown) => parseJsonBody(Buffer.from(JSON.stringify({ userId: 'u', event: 'e', properties })));
    // The body adds one level around a single call's properties (and a batch's context).
    expect(parse(nested(MAX_JSON_DEPTH))).toMatchObject({ ok: true, fieldsWithinDepth: true });
    expect(parse(nested(MAX_JSON_DEPTH + 1))).toMatchObject({ ok: true, fieldsWithinDepth: false });
    expect(parse(nested(MAX_JSON_DEPTH + 2))).toMatchObject({ ok: true, fieldsWithinDepth: false });
  });

  it('refuses, before parsing, a body nesting deeper than a batch message\'s fields may', () => {
    // Body, batch array, message: three levels around a message's properties.
    const atLimit = { batch: [{ type: 'track', userId: 'u', event: 'e', properties: nested(MAX_JSON_DEPTH) }] };
    expect(parseJsonBody(Buffer.from(JSON.stringify(atLimit)))).toMatchObject({ ok: true });
    const single = { userId: 'u', event: 'e', properties: nested(MAX_JSON_DEPTH + 3) };
    expect(parseJsonBody(Buffer.from(JSON.stringify(single)))).toMatchObject({ ok: false, error: { status: 400, code: 'too_deep', details: { limit: MAX_JSON_DEPTH } } });
  });

  it('refuses an empty body', () => {
    expect(parseJsonBody(Buffer.from('  '))).toMatchObject({ ok: false, error: { status: 400, code: 'invalid_json', error: 'the request body is empty: send a JSON object' } });
  });

  it('refuses malformed JSON without quoting the body back', () => {
    const result = parseJsonBody(Buffer.from('xyz{"writeKey":"wk_secret_value"}'));
    expect(result).toMatchObject({ ok: false, error: { status: 400, code: 'invalid_json' } });
    expect(JSON.stringify(result)).not.toContain('wk_secret');
    expect(result.ok ? '' : result.error.error).toBe("the request body is not valid JSON: Unexpected token 'x'");
  });
});

describe('isApiError', () => {
  it('tells errors from buffers', () => {
    expect(isApiError(Buffer.from('x'))).toBe(false);
    expect(isApiError({ status: 400, code: 'x', error: 'y' })).toBe(true);
  });
});
