import { describe, expect, it } from 'vitest';
import { PartyTurns } from './party-turns.js';

describe('PartyTurns', () => {
  it('gives one item per party in rotation, each party’s in order, and withdraws one on request', () => {
    const turns = new PartyTurns<string>();
    for (const [party, item] of [['a', 'a1'], ['a', 'a2'], ['b', 'b1'], ['a', 'a3'], ['c', 'c1'], ['b', 'b2']] as const) turns.push(party, item);
    expect(turns.remove('c', 'c1')).toBe(true);
    expect(turns.remove('c', 'c1')).toBe(false);
    expect(turns.size).toBe(5);
    expect(turns.peek()).toBe('a1');
    const taken: string[] = [];
    for (let item = turns.take(); item !== undefined; item = turns.take()) taken.push(item);
    expect(taken).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
    expect(turns.size).toBe(0);
    expect(turns.peek()).toBeUndefined();
  });
});
