import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineAndColumn, syntaxErrorOffset } from './json-syntax.js';

describe('syntaxErrorOffset', () => {
  it('finds nothing wrong with valid JSON', () => {
    for (const text of ['{}', '[]', ' {"a":[1,-2.5e+3,true,false,null,"\\u00e9\\n"],"b":{}} ', '"x"', '0', '[[[]]]']) expect(syntaxErrorOffset(text)).toBeUndefined();
  });

  it.each([
    ['{"a": x}', 6],
    ['[1,]', 3],
    ['{a:1}', 1],
    ['{"a" 1}', 5],
    ['{"a":1,}', 7],
    ['{"a":"\u0001"}', 6],
    ['{"a":"\\q"}', 7],
    ['{"a":"\\u12x4"}', 10],
    ['[01]', 2],
    ['[1.]', 3],
    ['[1e]', 3],
    ['[-]', 2],
    ['[tru]', 4],
    ['{"a":1} x', 8],
    ['{"batch": [', 11],
    ['"abc', 4],
    ['[1 2]', 3],
  ])('%j: at %i', (text, offset) => {
    expect(syntaxErrorOffset(text)).toBe(offset);
  });

  it('agrees with JSON.parse on what is JSON', () => {
    fc.assert(
      fc.property(fc.json(), fc.nat(), fc.constantFrom('', 'x', ',', ']', '}', '"', ':', '\\', ' '), (json, at, insert) => {
        const position = at % (json.length + 1);
        const text = json.slice(0, position) + insert + json.slice(position);
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        expect(syntaxErrorOffset(text) === undefined).toBe(valid);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('lineAndColumn', () => {
  it('counts lines by newline, both from 1', () => {
    expect(lineAndColumn('abc', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\ncd\nef', 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn('ab\ncd\nef', 6)).toEqual({ line: 3, column: 1 });
  });
});
