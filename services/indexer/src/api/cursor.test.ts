import { describe, expect, it } from 'vitest';
import { decodeAttemptCursor, decodeTailCursor, encodeAttemptCursor, encodeTailCursor, InvalidCursor } from './cursor.js';

describe('cursors', () => {
  it('round-trip, as URL-safe text', () => {
    const position = { startedAt: 1_764_000_000_123, partition: 3, offset: 1042 };
    const cursor = encodeAttemptCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeAttemptCursor(cursor)).toEqual(position);
    expect(decodeTailCursor(encodeTailCursor(987))).toBe(987);
  });

  it('refuse anything they did not give out', () => {
    for (const bad of ['', 'not base64!', Buffer.from('[1,2,3]').toString('base64url'), Buffer.from('{"a":[1,2]}').toString('base64url'), Buffer.from('{"a":[1,2,"x"]}').toString('base64url'), 'x'.repeat(500)]) {
      expect(() => decodeAttemptCursor(bad), bad).toThrow(InvalidCursor);
    }
    expect(() => decodeTailCursor(encodeAttemptCursor({ startedAt: 1, partition: 0, offset: 0 }))).toThrow(InvalidCursor);
    expect(() => decodeTailCursor(Buffer.from('{"s":-1}').toString('base64url'))).toThrow(InvalidCursor);
  });

  it('refuse positions no query can hold: a partition past 32 bits, a negative offset, a time no date holds', () => {
    for (const a of [[1, 3_000_000_000, 1], [1, -1, 1], [1, 0, -1], [9e15, 0, 0]]) {
      expect(() => decodeAttemptCursor(Buffer.from(JSON.stringify({ a })).toString('base64url')), JSON.stringify(a)).toThrow(InvalidCursor);
    }
  });
});
