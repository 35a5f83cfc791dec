import { describe, expect, it } from 'vitest';
import { ArrayValueError, binaryArray } from './binary-array.js';
import { classifySqlError } from './client.js';

/** array_recv's reading of a one-dimensional array, for checking what binaryArray wrote. */
function readArray(buffer: Buffer): { oid: number; hasNull: number; values: (Buffer | null)[] } {
  const dimensions = buffer.readInt32BE(0);
  const hasNull = buffer.readInt32BE(4);
  const oid = buffer.readInt32BE(8);
  if (dimensions === 0) return { oid, hasNull, values: [] };
  expect(dimensions).toBe(1);
  const count = buffer.readInt32BE(12);
  expect(buffer.readInt32BE(16)).toBe(1); // lower bound
  const values: (Buffer | null)[] = [];
  let at = 20;
  for (let index = 0; index < count; index++) {
    const length = buffer.readInt32BE(at);
    at += 4;
    values.push(length === -1 ? null : buffer.subarray(at, at + length));
    if (length > 0) at += length;
  }
  expect(at).toBe(buffer.length);
  return { oid, hasNull, values };
}

describe('binaryArray', () => {
  it('writes text as UTF-8 bytes, each with its length, NULL as -1', () => {
    const array = readArray(binaryArray('text', ['a"b\\c', null, '', 'é€😀', undefined]));
    expect(array.oid).toBe(25);
    expect(array.hasNull).toBe(1);
    expect(array.values.map((value) => value?.toString('utf8') ?? null)).toEqual(['a"b\\c', null, '', 'é€😀', null]);
  });

  it('writes an empty array with no dimensions', () => {
    expect(binaryArray('int8', [])).toEqual(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20]));
  });

  it('writes int4 and int8 big-endian, negative and beyond 32 bits exactly', () => {
    const int4 = readArray(binaryArray('int4', [0, -1, 2 ** 31 - 1, -(2 ** 31)]));
    expect(int4.oid).toBe(23);
    expect(int4.hasNull).toBe(0);
    expect(int4.values.map((value) => value?.readInt32BE(0))).toEqual([0, -1, 2 ** 31 - 1, -(2 ** 31)]);
    const values = [0, -1, 1_764_000_000_000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 32, -(2 ** 32) - 5];
    const int8 = readArray(binaryArray('int8', values));
    expect(int8.oid).toBe(20);
    expect(int8.values.map((value) => value?.readBigInt64BE(0))).toEqual(values.map(BigInt));
  });

  it('refuses what the column cannot hold as PostgreSQL would: a data error, set aside rather than retried', () => {
    for (const [element, value, code] of [
      ['int4', 2 ** 31, '22003'],
      ['int4', 1.5, '22P02'],
      ['int8', 2 ** 53, '22003'],
      ['int8', 'x', '22P02'],
    ] as const) {
      let caught: unknown;
      try {
        binaryArray(element, [value]);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ArrayValueError);
      expect((caught as ArrayValueError).code).toBe(code);
      expect(classifySqlError(caught)).toBe('data');
    }
  });
});
