import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth.js';

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not brackets inside strings', () => {
    expect(nestsDeeperThan('{"a":{"b":[1,2,{"c":"}}}]]]"}]}}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[1,2,{"c":"x"}]}}', 3)).toBe(true);
    expect(nestsDeeperThan('"\\\\"', 0)).toBe(false);
    expect(nestsDeeperThan('{"q":"\\"{{{{"}', 1)).toBe(false);
  });

  it('finds 5,000 levels at once, without recursion', () => {
    expect(nestsDeeperThan(`${'['.repeat(5000)}${']'.repeat(5000)}`, 64)).toBe(true);
  });

  it('agrees with the depth of the parsed value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, max) => {
        expect(nestsDeeperThan(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
    );
  });
});
