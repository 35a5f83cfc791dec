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

  const problemOf = (text: string) => {
    const result = parseJsonBody(Buffer.from(text));
    if (result.ok) throw new Error(`parsed: ${text}`);
    expect(result.error).toMatchObject({ status: 400, code: 'invalid_json' });
    return result.error.error;
  };

  it('refuses malformed JSON without quoting the body back', () => {
    const problem = problemOf('xyz{"writeKey":"wk_secret_value"}');
    expect(problem).not.toContain('wk_secret');
    expect(problem).toBe('the request body is not valid JSON: Unexpected character at position 0 (line 1 column 1)');
  });

  it('says where an unexpected character is when V8 quotes the middle of a long body instead ("...")', () => {
    // V8: `Unexpected token 'x', ..."ecret_1234","batch":[1,2,3, x]}" is not valid JSON`.
    const body = `{"writeKey":"wk_secret_1234","batch":[${Array.from({ length: 30 }, (_, n) => n).join(',')}, x]}`;
    const problem = problemOf(body);
    expect(problem).not.toMatch(/wk_secret|secret|batch|\.\.\.|"/);
    expect(problem).toBe(`the request body is not valid JSON: Unexpected character at position ${body.indexOf('x]')} (line 1 column ${body.indexOf('x]') + 1})`);
  });

  it("keeps V8's own phrase and position where it gives one, with line and column", () => {
    expect(problemOf('{"batch": [1 2]}')).toBe("the request body is not valid JSON: Expected ',' or ']' after array element at position 13 (line 1 column 14)");
    expect(problemOf('{"a":1}\n  x')).toBe('the request body is not valid JSON: Unexpected non-whitespace character after JSON at position 10 (line 2 column 3)');
    expect(problemOf('{"batch": [')).toBe('the request body is not valid JSON: Unexpected end of JSON input at position 11 (line 1 column 12)');
    expect(problemOf('{\n"writeKey": "wk_secret_1234" x}')).toBe(
      "the request body is not valid JSON: Expected ',' or '}' after property value at position 31 (line 2 column 30)",
    );
  });
});

describe('isApiError', () => {
  it('tells errors from buffers', () => {
    expect(isApiError(Buffer.from('x'))).toBe(false);
    expect(isApiError({ status: 400, code: 'x', error: 'y' })).toBe(true);
  });
});
