import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.js';

describe('isoTime', () => {
  it('gives the text toISOString gives, for every valid time', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 5_000 },
    );
  });

  it('gives it for times that share a second or a cache slot, in any order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1_700_000_000_000 - 200_000, max: 1_700_000_000_000 + 200_000 }), { minLength: 1, maxLength: 50 }), (times) => {
        for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
    );
    for (const ms of [0, 1, 999, 1_000, -1, -1_000, -1_001, 64_000, 128_000, 1_764_148_458_007]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });
});
