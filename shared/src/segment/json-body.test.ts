import { describe, expect, it } from 'vitest';
import { isApiError } from './api-error.js';
import { parseJsonBody } from './json-body.js';

describe('parseJsonBody', () => {
  it('parses JSON, tolerating a byte-order mark', () => {
    expect(parseJsonBody(Buffer.from('\uFEFF{"a":1}'))).toEqual({ ok: true, value: { a: 1 } });
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
