import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_CAP_MS, retryAfterMs } from './retry-after.js';

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

  it('reads a wait longer than any window as the cap, however long', () => {
    expect(retryAfterMs(String(RETRY_AFTER_CAP_MS / 1000 + 1), now)).toBe(RETRY_AFTER_CAP_MS);
    // 9,007,199,254,741 s: past the largest exact Avro long in milliseconds.
    for (const value of ['9007199254741', '9999999999999999', '9'.repeat(400), 'Fri, 31 Dec 9999 23:59:59 GMT']) {
      expect(retryAfterMs(value, now), value.slice(0, 20)).toBe(RETRY_AFTER_CAP_MS);
    }
  });

  it('ignores what it cannot read, leaving the ladder to decide', () => {
    for (const value of [undefined, '', '-5', '1.5', '5m', 'soon', 'Tue, 24 Nov 2026 99:99:99 GMT']) {
      expect(retryAfterMs(value, now), String(value)).toBeUndefined();
    }
  });
});
