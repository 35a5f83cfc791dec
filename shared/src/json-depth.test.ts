import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth.js';

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/** The scan as it was, a character at a time: the reference the faster one must agree with. */
function nestsDeeperThanByCharacter(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > max) return true;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return false;
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

  it('ends a string at a quote after an even run of backslashes only', () => {
    expect(nestsDeeperThan('"\\\\"[', 0)).toBe(true); // "\\"[: the quote closes, the array counts
    expect(nestsDeeperThan('"\\\\\\"[', 0)).toBe(false); // "\\\"[: the quote is escaped, [ is inside
    expect(nestsDeeperThan('"unterminated [[[', 0)).toBe(false);
  });

  it('agrees with the character-at-a-time scan on any text, valid JSON or not (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('"', '"', '\\', '\\', '\\', '[', '[', '{', ']', '}', 'a'), { maxLength: 40, size: 'max' }).map((parts) => parts.join('')), fc.integer({ min: 0, max: 4 }), (text, max) => {
        expect(nestsDeeperThan(text, max)).toBe(nestsDeeperThanByCharacter(text, max));
      }),
      { numRuns: 5_000 },
    );
  });

  it('agrees with the depth of the parsed value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, max) => {
        expect(nestsDeeperThan(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
    );
  });
});
