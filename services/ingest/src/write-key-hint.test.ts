import { describe, expect, it } from 'vitest';
import { writeKeyHint } from './write-key-hint.js';

const hint = (text: string) => writeKeyHint(Buffer.from(text, 'utf8'));

describe('writeKeyHint', () => {
  it('finds the write key analytics.js puts in the body, wherever it stands', () => {
    expect(hint('{"type":"track","event":"e","anonymousId":"a","writeKey":"wk_web"}')).toBe('wk_web');
    expect(hint('{"batch":[{"type":"track"}],"sentAt":"2024-01-01T00:00:00Z", "writeKey" :\n "wk_web"}')).toBe('wk_web');
  });

  it('gives no hint where there is no plain string to read', () => {
    expect(hint('{"type":"track"}')).toBeUndefined();
    expect(hint('{"writeKey":null}')).toBeUndefined();
    expect(hint('{"writeKey":""}')).toBeUndefined();
    expect(hint('{"writeKey":"wk_\\"quoted"}')).toBeUndefined();
    expect(hint('{"writeKey":"unterminated')).toBeUndefined();
    expect(hint(`{"writeKey":"${'k'.repeat(257)}"}`)).toBeUndefined();
    expect(hint('"writeKey"')).toBeUndefined();
  });

  it('reads the first one: a hint, not the authentication', () => {
    expect(hint('{"properties":{"writeKey":"wk_other"},"writeKey":"wk_web"}')).toBe('wk_other');
  });
});
