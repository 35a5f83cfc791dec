/**
 * The read API's query parameters, parsed and checked (zod) into what the queries need. A
 * bad parameter is refused with a 400 whose `issues` name it; unknown parameters are
 * refused too, so a misspelt filter (`destinationId=`) is not silently ignored.
 */
import { z } from 'zod';
import { AdminError, MAX_DATE_MS, parseDuration, type ValidationIssue } from '@tributary/shared';
import { safeText } from '../rows.js';
import { decodeAttemptCursor, decodeTailCursor, InvalidCursor, type AttemptPosition } from './cursor.js';

export const DEFAULT_WINDOW_MS = 3_600_000;
export const MAX_BUCKETS = 1000;
export const MIN_BUCKET_MS = 10_000;
export const MAX_BUCKET_MS = 86_400_000;

/** ISO-8601 (`2026-11-25T10:00:00Z`, `2026-11-25`) or epoch milliseconds a date can hold. */
export function parseTime(text: string): number | undefined {
  // Past MAX_DATE_MS no date exists: answering with it (toISOString) threw, and the read API
  // said its database was unavailable.
  if (/^\d{1,16}$/.test(text)) return Number(text) <= MAX_DATE_MS ? Number(text) : undefined;
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

const time = z.string().transform((text, ctx) => {
  const ms = parseTime(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: 'must be an ISO-8601 time (2026-11-25T10:00:00Z) or epoch milliseconds' });
    return z.NEVER;
  }
  return ms;
});

const limit = (max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number from 1 to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(1, `must be from 1 to ${max}`).max(max, `must be from 1 to ${max}`))
    .optional()
    .transform((value) => value ?? fallback);

// As written (rows.ts, safeText): a NUL, which PostgreSQL text refuses, was stored as U+FFFD,
// and looked up as NUL it failed the query instead of finding nothing.
const id = z.string().min(1, 'may not be empty').max(1000, 'is longer than 1000 characters').transform(safeText);

export type StatusFilter =
  | { kind: 'outcome'; outcome: 'delivered' | 'retry' | 'deferred' | 'dead' }
  | { kind: 'status'; status: number }
  | { kind: 'class'; from: number; to: number }
  | { kind: 'error' };

export function parseStatus(text: string): StatusFilter | undefined {
  if (text === 'delivered' || text === 'retry' || text === 'deferred' || text === 'dead') return { kind: 'outcome', outcome: text };
  if (text === 'error') return { kind: 'error' };
  if (/^[1-5]\d\d$/.test(text)) return { kind: 'status', status: Number(text) };
  if (/^[1-5]xx$/i.test(text)) {
    const from = Number(text[0]) * 100;
    return { kind: 'class', from, to: from + 100 };
  }
  return undefined;
}

const status = z.string().transform((text, ctx) => {
  const parsed = parseStatus(text);
  if (!parsed) {
    ctx.addIssue({ code: 'custom', message: 'must be delivered, retry, deferred, dead, error, an HTTP status (503) or a class (5xx)' });
    return z.NEVER;
  }
  return parsed;
});

const attemptCursor = z.string().transform((text, ctx) => {
  try {
    return decodeAttemptCursor(text);
  } catch (error) {
    if (!(error instanceof InvalidCursor)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
    return z.NEVER;
  }
});

const tailCursor = z.string().transform((text, ctx) => {
  try {
    return decodeTailCursor(text);
  } catch (error) {
    if (!(error instanceof InvalidCursor)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
    return z.NEVER;
  }
});

const bucket = z.string().transform((text, ctx) => {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a duration from 10s to 1d, e.g. 1m' });
    return z.NEVER;
  }
  if (ms < MIN_BUCKET_MS || ms > MAX_BUCKET_MS) {
    ctx.addIssue({ code: 'custom', message: 'must be a duration from 10s to 1d, e.g. 1m' });
    return z.NEVER;
  }
  return ms;
});

const rangeShape = { since: time.optional(), until: time.optional() };

export interface TimeRange {
  since: number;
  until: number;
}

function validationFailed(issues: ValidationIssue[]): AdminError {
  const listed = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
  return new AdminError(400, 'validation_failed', `invalid query: ${listed}`, issues);
}

/** Query strings arrive as strings, or arrays when a parameter repeats. */
type Query = Record<string, string | string[] | undefined>;

function parse<S extends z.ZodRawShape>(shape: S, query: unknown): z.output<z.ZodObject<S>> {
  const input = (query ?? {}) as Query;
  const issues: ValidationIssue[] = [];
  for (const [name, value] of Object.entries(input)) {
    if (!(name in shape)) issues.push({ path: name, message: `unknown query parameter; known: ${Object.keys(shape).join(', ')}` });
    else if (Array.isArray(value)) issues.push({ path: name, message: 'given more than once' });
  }
  if (issues.length > 0) throw validationFailed(issues);
  const result = z.object(shape).safeParse(input);
  if (result.success) return result.data;
  throw validationFailed(result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })));
}

/** `until` defaults to now, `since` to an hour before `until`; `since` must come first. */
function range(since: number | undefined, until: number | undefined, now: number): TimeRange {
  const end = until ?? now;
  const start = since ?? end - DEFAULT_WINDOW_MS;
  if (start >= end) throw validationFailed([{ path: 'since', message: 'must be before until' }]);
  return { since: start, until: end };
}

export interface AttemptSearch extends TimeRange {
  destination?: string | undefined;
  source?: string | undefined;
  status?: StatusFilter | undefined;
  userId?: string | undefined;
  messageId?: string | undefined;
  limit: number;
  cursor?: AttemptPosition | undefined;
}

export function parseAttemptSearch(query: unknown, now = Date.now()): AttemptSearch {
  const parsed = parse(
    { destination: id.optional(), source: id.optional(), status: status.optional(), userId: id.optional(), messageId: id.optional(), ...rangeShape, limit: limit(500, 50), cursor: attemptCursor.optional() },
    query,
  );
  const { since, until, ...rest } = parsed;
  return { ...rest, ...range(since, until, now) };
}

export interface TailQuery {
  source?: string | undefined;
  after?: number | undefined;
  limit: number;
}

export function parseTail(query: unknown): TailQuery {
  return parse({ source: id.optional(), after: tailCursor.optional(), limit: limit(200, 50) }, query);
}

export function parseRange(query: unknown, now = Date.now()): TimeRange {
  const { since, until } = parse(rangeShape, query);
  return range(since, until, now);
}

export interface TimelineQuery extends TimeRange {
  bucketMs: number;
  /** The first bucket's start: `since` rounded down to a whole bucket. */
  origin: number;
  buckets: number;
}

export function parseTimeline(query: unknown, now = Date.now()): TimelineQuery {
  const parsed = parse({ ...rangeShape, bucket: bucket.optional() }, query);
  const { since, until } = range(parsed.since, parsed.until, now);
  const bucketMs = parsed.bucket ?? 60_000;
  const origin = Math.floor(since / bucketMs) * bucketMs;
  const buckets = Math.ceil((until - origin) / bucketMs);
  if (buckets > MAX_BUCKETS) {
    throw validationFailed([{ path: 'bucket', message: `gives ${buckets} buckets between since and until; at most ${MAX_BUCKETS} are answered: choose a larger bucket or a shorter range` }]);
  }
  return { since, until, bucketMs, origin, buckets };
}

/** A path parameter (message or destination id). */
export function parseId(name: string, value: unknown): string {
  const result = id.safeParse(value);
  if (result.success) return result.data;
  throw validationFailed([{ path: name, message: result.error.issues[0]?.message ?? 'is invalid' }]);
}
