import { describe, expect, it } from 'vitest';
import { chunkMessages } from './transactional-writer.js';

const message = (bytes: number, value: Buffer | null = Buffer.alloc(bytes - 1)) => ({ key: Buffer.alloc(1), value });

describe('chunkMessages', () => {
  it('splits into runs of at most maxBytes, in order', () => {
    const messages = [message(40), message(40), message(30), message(50)];
    expect(chunkMessages(messages, 100).map((chunk) => chunk.length)).toEqual([2, 2]);
    expect(chunkMessages(messages, 100).flat()).toEqual(messages);
  });

  it('sends an oversized message alone and counts tombstones by their key', () => {
    expect(chunkMessages([message(10), message(500), message(10)], 100).map((chunk) => chunk.length)).toEqual([1, 1, 1]);
    expect(chunkMessages([message(1, null), message(1, null)], 2)).toHaveLength(1);
    expect(chunkMessages([], 100)).toEqual([]);
  });
});
