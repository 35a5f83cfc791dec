/**
 * One-dimensional PostgreSQL arrays in the binary wire format — what `array_send` writes and
 * `array_recv` reads — for the columns a batch writes as `unnest($n::text[], …)`.
 *
 * Why not hand the drivers JavaScript arrays: both then write each array as a text literal
 * (`{"…","…"}`), escaping every quote and backslash of every element — a message's JSON is
 * mostly quotes — and PGlite measures the result's UTF-8 length a character at a time, twice;
 * the server then parses the literal back. In the indexer's profile that was about a fifth of
 * its CPU per event. A Buffer goes as a binary parameter through node-postgres and PGlite alike:
 * each element is its length and its bytes, copied, and nothing is parsed.
 *
 * The layout (src/backend/utils/adt/arrayfuncs.c, array_recv): int32 dimensions, int32 "has
 * nulls", the element type's OID, then per dimension int32 length and int32 lower bound, then
 * per element int32 byte length (-1 for NULL) and the element in its own binary form: UTF-8
 * for text, big-endian two's complement for int4 and int8.
 */

export type ArrayElement = 'text' | 'int4' | 'int8';

/** array_recv refuses an array whose element OID is not the parameter's element type. */
const ELEMENT_OID: Record<ArrayElement, number> = { text: 25, int4: 23, int8: 20 };

const INT4_MIN = -(2 ** 31);
const INT4_MAX = 2 ** 31 - 1;

/**
 * A value the column cannot hold: refused here as PostgreSQL would refuse it, with its
 * SQLSTATE (class 22, "data exception"), so the caller sets the record aside as it does for
 * a refusal from the server rather than retrying it.
 */
export class ArrayValueError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ArrayValueError';
  }
}

function checkInteger(element: 'int4' | 'int8', value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new ArrayValueError('22P02', `invalid input syntax for type ${element === 'int4' ? 'integer' : 'bigint'}: ${String(value)}`);
  // int8 beyond 2^53 cannot arrive as a JavaScript number exactly; refused rather than rounded.
  if (element === 'int4' ? value < INT4_MIN || value > INT4_MAX : !Number.isSafeInteger(value)) {
    throw new ArrayValueError('22003', `value ${value} is out of range for type ${element === 'int4' ? 'integer' : 'bigint'}`);
  }
  return value;
}

/** `values` as a binary `element[]`; null and undefined are NULL. Pure. */
export function binaryArray(element: ArrayElement, values: readonly unknown[]): Buffer {
  const count = values.length;
  const texts = element === 'text' ? new Array<string>(count) : undefined;
  const textLengths = new Array<number>(element === 'text' ? count : 0);
  let size = count === 0 ? 12 : 20;
  let hasNull = 0;
  for (let index = 0; index < count; index++) {
    const value = values[index];
    size += 4;
    if (value === null || value === undefined) {
      hasNull = 1;
    } else if (texts !== undefined) {
      // Anything else as its text, as both drivers' own array literals would have it.
      const text = typeof value === 'string' ? value : String(value);
      const length = Buffer.byteLength(text, 'utf8');
      texts[index] = text;
      textLengths[index] = length;
      size += length;
    } else {
      size += element === 'int4' ? 4 : 8;
    }
  }
  const buffer = Buffer.allocUnsafe(size);
  let at = buffer.writeInt32BE(count === 0 ? 0 : 1, 0);
  at = buffer.writeInt32BE(hasNull, at);
  at = buffer.writeInt32BE(ELEMENT_OID[element], at);
  if (count > 0) {
    at = buffer.writeInt32BE(count, at);
    at = buffer.writeInt32BE(1, at);
  }
  for (let index = 0; index < count; index++) {
    const value = values[index];
    if (value === null || value === undefined) {
      at = buffer.writeInt32BE(-1, at);
    } else if (texts !== undefined) {
      const length = textLengths[index] as number;
      at = buffer.writeInt32BE(length, at);
      at += buffer.write(texts[index] as string, at, length, 'utf8');
    } else if (element === 'int4') {
      at = buffer.writeInt32BE(4, at);
      at = buffer.writeInt32BE(checkInteger('int4', value), at);
    } else {
      const integer = checkInteger('int8', value);
      // Two 32-bit halves: exact for every safe integer, negative ones included, and no BigInt per value.
      const high = Math.floor(integer / 2 ** 32);
      at = buffer.writeInt32BE(8, at);
      at = buffer.writeInt32BE(high, at);
      at = buffer.writeUInt32BE(integer - high * 2 ** 32, at);
    }
  }
  return buffer;
}
