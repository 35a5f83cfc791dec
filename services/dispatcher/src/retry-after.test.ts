import { describe, expect, it } from 'vitest';
import { retryAfterMs } from './retry-after.js';

const now = Date.parse('2026-11-24T10:00:00Z');

describe('retryAfterMs', () => {
  it('reads delay-seconds', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs(['30', '60'], now)).toBe(30_000);
  });

  it('reads an HTTP date, counted from now, never negative', () => {
    expect(retryAfterMs('Tue, 24 Nov 2026 10:01:30 GMT', now)).toBe(90_000);
    expect(retryAfterMs('Tue, 24 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read, leaving the ladder to decide', () => {
    for (const value of [undefined, '', '-5', '1.5', '5m', 'soon', 'Tue, 24 Nov 2026 99:99:99 GMT']) {
      expect(retryAfterMs(value, now), String(value)).toBeUndefined();
    }
  });
});
