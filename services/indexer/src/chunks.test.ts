import { describe, expect, it } from 'vitest';
import { chunkRecords } from './chunks.js';

const record = (bytes: number) => ({ key: null, value: Buffer.alloc(bytes) });

describe('chunkRecords', () => {
  it('bounds each chunk by count', () => {
    expect(chunkRecords(Array.from({ length: 5 }, () => record(1)), 2, 1000).map((chunk) => chunk.length)).toEqual([2, 2, 1]);
  });

  it('bounds each chunk by bytes, a larger record travelling alone', () => {
    expect(chunkRecords([record(40), record(40), record(40), record(500), record(10)], 100, 100).map((chunk) => chunk.length)).toEqual([2, 1, 1, 1]);
  });

  it('keeps the order and drops nothing', () => {
    const records = Array.from({ length: 7 }, (_, index) => ({ key: Buffer.from(String(index)), value: null }));
    expect(chunkRecords(records, 3, 1000).flat()).toEqual(records);
    expect(chunkRecords([], 3, 1000)).toEqual([]);
  });
});
