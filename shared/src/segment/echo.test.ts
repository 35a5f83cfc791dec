import { describe, expect, it } from 'vitest';
import { echoed, echoedJson, MAX_ECHO_CHARACTERS } from './echo.js';

describe('echoed', () => {
  it('keeps text up to the limit whole', () => {
    expect(echoed('m'.repeat(MAX_ECHO_CHARACTERS))).toBe('m'.repeat(MAX_ECHO_CHARACTERS));
  });

  it('cuts longer text to the limit and says how much was left out', () => {
    expect(echoed('m'.repeat(30_000))).toBe(`${'m'.repeat(MAX_ECHO_CHARACTERS)}…(29900 more characters)`);
  });

  it('does not split a surrogate pair', () => {
    const text = `${'a'.repeat(MAX_ECHO_CHARACTERS - 1)}😀tail`;
    expect(echoed(text)).toBe(`${'a'.repeat(MAX_ECHO_CHARACTERS - 1)}…(6 more characters)`);
  });

  it('quotes JSON values', () => {
    expect(echoedJson('yesterday')).toBe('"yesterday"');
    expect(echoedJson({ a: 'x'.repeat(500) })).toMatch(/^\{"a":"x+…\(\d+ more characters\)$/);
  });
});
