import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../json-depth.js';
import { tooDeepFields } from './free-form-depth.js';

/** JSON text of an object nesting `levels` objects and arrays deep, itself included. */
function nestedText(levels: number): string {
  return `${'{"a":['.repeat(Math.floor((levels - 1) / 2))}${levels % 2 === 0 ? '{"b":{}}' : '{}'}${']}'.repeat(Math.floor((levels - 1) / 2))}`;
}

const record = { properties: null, traits: null, context: null, integrations: null };

describe('tooDeepFields', () => {
  it('takes a field nesting exactly the limit and names one past it, as the router decides', () => {
    expect(tooDeepFields({ ...record, properties: nestedText(MAX_JSON_DEPTH), context: nestedText(3) })).toEqual([]);
    expect(tooDeepFields({ ...record, traits: nestedText(MAX_JSON_DEPTH + 1) })).toEqual(['traits']);
  });

  it('names every field past the limit, in a fixed order', () => {
    const deep = nestedText(MAX_JSON_DEPTH + 1);
    expect(tooDeepFields({ properties: deep, traits: '{}', context: deep, integrations: deep })).toEqual(['properties', 'context', 'integrations']);
  });

  it('ignores brackets inside strings', () => {
    expect(tooDeepFields({ ...record, properties: JSON.stringify({ text: '{'.repeat(MAX_JSON_DEPTH + 10) }) })).toEqual([]);
  });
});
