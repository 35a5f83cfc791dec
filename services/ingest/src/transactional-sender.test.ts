import { describe, expect, it } from 'vitest';
import type { ProduceRecord } from './produce-batcher.js';
import { chunkRecords } from './transactional-sender.js';

const record = (label: string, bytes: number): ProduceRecord => ({ key: Buffer.from(label), value: Buffer.alloc(bytes - label.length) });
const shape = (chunks: ProduceRecord[][]) => chunks.map((chunk) => chunk.map((r) => r.key.toString()));

describe('chunkRecords', () => {
  it('keeps records in order in runs of at most maxBytes', () => {
    const records = [record('a', 40), record('b', 40), record('c', 20), record('d', 50), record('e', 10)];
    expect(shape(chunkRecords(records, 100))).toEqual([['a', 'b', 'c'], ['d', 'e']]);
  });

  it('sends a record larger than maxBytes alone', () => {
    expect(shape(chunkRecords([record('a', 10), record('big', 500), record('b', 10)], 100))).toEqual([['a'], ['big'], ['b']]);
  });

  it('makes one chunk of a small transaction and none of an empty one', () => {
    expect(shape(chunkRecords([record('a', 10), record('b', 10)], 100))).toEqual([['a', 'b']]);
    expect(chunkRecords([], 100)).toEqual([]);
  });
});
