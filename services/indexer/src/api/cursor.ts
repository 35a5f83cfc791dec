/**
 * Keyset cursors, opaque to clients: base64url of a small JSON object. The search pages on
 * (startedAt, partition, offset) — the order of its index — so a page costs the same
 * however deep it is, and rows indexed meanwhile never shift a page. The live tail's cursor
 * is the indexing sequence number of the newest message a client has seen.
 */
import { MAX_DATE_MS } from '@tributary/shared';

export class InvalidCursor extends Error {
  constructor(message = 'is not a cursor this API gave out') {
    super(message);
    this.name = 'InvalidCursor';
  }
}

export interface AttemptPosition {
  startedAt: number;
  partition: number;
  offset: number;
}

const encode = (value: object) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

function decode(text: string): Record<string, unknown> {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) throw new InvalidCursor();
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // falls through to the refusal
  }
  throw new InvalidCursor();
}

const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

/** A Kafka partition number is a 32-bit signed integer (and an integer column). */
const MAX_PARTITION = 2 ** 31 - 1;

export function encodeAttemptCursor(position: AttemptPosition): string {
  return encode({ a: [position.startedAt, position.partition, position.offset] });
}

export function decodeAttemptCursor(text: string): AttemptPosition {
  const { a } = decode(text);
  if (!Array.isArray(a) || a.length !== 3 || !a.every(isInt)) throw new InvalidCursor();
  const [startedAt, partition, offset] = a as [number, number, number];
  // Out of these ranges the query's parameters fail (integer out of range), which the read
  // API took for its database failing.
  if (Math.abs(startedAt) > MAX_DATE_MS || partition < 0 || partition > MAX_PARTITION || offset < 0) throw new InvalidCursor();
  return { startedAt, partition, offset };
}

export function encodeTailCursor(seq: number): string {
  return encode({ s: seq });
}

export function decodeTailCursor(text: string): number {
  const { s } = decode(text);
  if (!isInt(s) || s < 0) throw new InvalidCursor();
  return s;
}
