/**
 * An audience snapshot as NDJSON: one `{"userId": …}` per line, or `{"userId": …, "value": …}`
 * for a computed trait. Lines are cut from the request stream as they arrive, so a snapshot
 * of millions of members never sits in memory; a line longer than the limit is refused
 * rather than buffered.
 */
import { MAX_ID_LENGTH, MAX_JSON_DEPTH, nestsDeeperThan } from '@tributary/shared';
import { isJsonObject } from '@tributary/shared/segment';

export const MAX_MEMBER_LINE_BYTES = 16 * 1024;
/** The router's limit for any id: a longer one would be quarantined there, never delivered. */
export const MAX_USER_ID_LENGTH = MAX_ID_LENGTH;
/**
 * Levels a computed trait's value may nest: the Identify's traits wrap it in one more object,
 * and the router refuses traits nesting deeper than MAX_JSON_DEPTH.
 */
export const MAX_VALUE_DEPTH = MAX_JSON_DEPTH - 1;

export interface MemberLine {
  userId: string;
  /** The computed trait's value as JSON text; undefined for a plain audience member. */
  value: string | undefined;
}

export class MemberLineError extends Error {
  constructor(
    readonly line: number,
    problem: string,
  ) {
    super(`line ${line}: ${problem}`);
    this.name = 'MemberLineError';
  }
}

/** One NDJSON line; blank lines are allowed (a trailing newline, say) and yield undefined. */
export function parseMemberLine(text: string, line: number): MemberLine | undefined {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MemberLineError(line, 'not valid JSON: each line must be one object like {"userId":"u1"}');
  }
  if (!isJsonObject(parsed)) throw new MemberLineError(line, 'must be a JSON object like {"userId":"u1"}');
  const { userId, value, ...rest } = parsed;
  const extra = Object.keys(rest);
  if (extra.length > 0) throw new MemberLineError(line, `unknown field ${JSON.stringify(extra[0])}: a line has "userId" and optionally "value"`);
  if (typeof userId !== 'string') throw new MemberLineError(line, userId === undefined ? 'userId is required' : 'userId must be a string');
  if (userId.length === 0) throw new MemberLineError(line, 'userId may not be empty');
  if (userId.length > MAX_USER_ID_LENGTH) throw new MemberLineError(line, `userId must be at most ${MAX_USER_ID_LENGTH} characters`);
  if (value === null) throw new MemberLineError(line, 'value may not be null: leave the member out of the snapshot to remove it');
  if (value === undefined) return { userId, value: undefined };
  const valueText = JSON.stringify(value);
  if (nestsDeeperThan(valueText, MAX_VALUE_DEPTH)) throw new MemberLineError(line, `value nests objects and arrays more than ${MAX_VALUE_DEPTH} levels deep`);
  return { userId, value: valueText };
}

/** Splits a byte stream into UTF-8 lines, numbered from 1, without holding more than one line. */
export async function* lines(chunks: AsyncIterable<Buffer | string>, maxLineBytes = MAX_MEMBER_LINE_BYTES): AsyncGenerator<{ text: string; line: number }> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  for await (const chunk of chunks) {
    let buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (;;) {
      const newline = buffer.indexOf(0x0a);
      if (newline < 0) break;
      const head = buffer.subarray(0, newline);
      line++;
      if (pendingBytes + head.length > maxLineBytes) throw new MemberLineError(line, `longer than ${maxLineBytes} bytes`);
      const text = (pendingBytes > 0 ? Buffer.concat([...pending, head]) : head).toString('utf8');
      pending = [];
      pendingBytes = 0;
      yield { text: text.endsWith('\r') ? text.slice(0, -1) : text, line };
      buffer = buffer.subarray(newline + 1);
    }
    if (buffer.length > 0) {
      pendingBytes += buffer.length;
      if (pendingBytes > maxLineBytes) throw new MemberLineError(line + 1, `longer than ${maxLineBytes} bytes`);
      pending.push(Buffer.from(buffer));
    }
  }
  if (pendingBytes > 0) yield { text: Buffer.concat(pending).toString('utf8'), line: line + 1 };
}
