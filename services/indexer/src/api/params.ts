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

/**
 * The longest range a summary, timeline or attempt search covers, after `since` is raised to
 * the retention horizon. PGlite has no statement timeout and runs one statement at a time, so
 * a scan over weeks of attempts held the writer and the health check behind it; the console's
 * longest range (its 7-day chart) fits.
 */
export const MAX_RANGE_MS = 7 * 86_400_000;

/** DELIVERY_LOG_RETENTION's default, for callers that do not say (tests). */
export const DEFAULT_RETENTION_MS = 7 * 86_400_000;

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2})(?::?(\d{2}))?))?$/i;

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * ISO-8601 with a zone (`2026-11-25T10:00:00Z`, `…+01:00`), a date (`2026-11-25`: its UTC
 * midnight) or epoch milliseconds a date can hold. A date-time without a zone is refused
 * rather than read in the server's zone (Date.parse does), which made one query mean different
 * times on different servers; fields out of range (`2026-02-31`, `T24:00`) are refused rather
 * than rolled over into another day.
 */
export function parseTime(text: string): number | undefined {
  // Past MAX_DATE_MS no date exists: answering with it (toISOString) threw, and the read API
  // said its database was unavailable.
  if (/^\d{1,16}$/.test(text)) return Number(text) <= MAX_DATE_MS ? Number(text) : undefined;
  const match = ISO_TIME.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, sec, fraction, zone, sign, offsetHours, offsetMinutes] = match;
  const hasTime = h !== undefined;
  if (hasTime && zone === undefined) return undefined;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, sec].map((field) => Number(field ?? 0)) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const offset = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes ?? 0));
  if (offsetHours !== undefined && (Number(offsetHours) > 23 || Number(offsetMinutes ?? 0) > 59)) return undefined;
  const millis = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  // Set field by field: Date.UTC reads years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime() - offset * 60_000;
}

const TIME_FORMS = 'must be an ISO-8601 time with a zone (2026-11-25T10:00:00Z, 2026-11-25T11:00:00+01:00), a date (2026-11-25, read as its UTC midnight) or epoch milliseconds';

const time = z.string().transform((text, ctx) => {
  const ms = parseTime(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: TIME_FORMS });
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
    // Own keys only: `in` also saw Object.prototype's, so ?constructor=1 or ?toString=x passed unrefused.
    if (!Object.hasOwn(shape, name)) issues.push({ path: name, message: `unknown query parameter; known: ${Object.keys(shape).join(', ')}` });
    else if (Array.isArray(value)) issues.push({ path: name, message: 'given more than once' });
  }
  if (issues.length > 0) throw validationFailed(issues);
  const result = z.object(shape).safeParse(input);
  if (result.success) return result.data;
  throw validationFailed(result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })));
}

/**
 * `until` defaults to now, `since` to an hour before `until`; `since` must come first. A
 * `since` before the retention horizon (now − DELIVERY_LOG_RETENTION) is raised to it — the
 * rows before it are being deleted, and reading them was an unbounded scan — and what remains
 * may span at most MAX_RANGE_MS.
 */
function range(since: number | undefined, until: number | undefined, now: number, retentionMs: number): TimeRange {
  const end = until ?? now;
  const start = since ?? end - DEFAULT_WINDOW_MS;
  if (start >= end) throw validationFailed([{ path: 'since', message: 'must be before until' }]);
  // A range wholly before the horizon is left as asked (MAX_RANGE_MS still bounds it): raised,
  // its since would pass its until.
  const horizon = now - retentionMs;
  const kept = start < horizon && horizon < end ? horizon : start;
  if (end - kept > MAX_RANGE_MS) {
    throw validationFailed([
      {
        path: 'since',
        message: `the range from since (or the retention horizon, if later) to until is ${formatDays(end - kept)}; at most ${formatDays(MAX_RANGE_MS)} are answered: choose a shorter range`,
      },
    ]);
  }
  return { since: kept, until: end };
}

const formatDays = (ms: number) => `${Number((ms / 86_400_000).toFixed(2))} days`;

export interface AttemptSearch extends TimeRange {
  destination?: string | undefined;
  source?: string | undefined;
  status?: StatusFilter | undefined;
  userId?: string | undefined;
  messageId?: string | undefined;
  limit: number;
  cursor?: AttemptPosition | undefined;
}

export function parseAttemptSearch(query: unknown, now = Date.now(), retentionMs = DEFAULT_RETENTION_MS): AttemptSearch {
  const parsed = parse(
    { destination: id.optional(), source: id.optional(), status: status.optional(), userId: id.optional(), messageId: id.optional(), ...rangeShape, limit: limit(500, 50), cursor: attemptCursor.optional() },
    query,
  );
  const { since, until, ...rest } = parsed;
  return { ...rest, ...range(since, until, now, retentionMs) };
}

export interface TailQuery {
  source?: string | undefined;
  after?: number | undefined;
  limit: number;
}

export function parseTail(query: unknown): TailQuery {
  return parse({ source: id.optional(), after: tailCursor.optional(), limit: limit(200, 50) }, query);
}

export function parseRange(query: unknown, now = Date.now(), retentionMs = DEFAULT_RETENTION_MS): TimeRange {
  const { since, until } = parse(rangeShape, query);
  return range(since, until, now, retentionMs);
}

export interface TimelineQuery extends TimeRange {
  bucketMs: number;
  /** The first bucket's start: `since` rounded down to a whole bucket. */
  origin: number;
  buckets: number;
}

export function parseTimeline(query: unknown, now = Date.now(), retentionMs = DEFAULT_RETENTION_MS): TimelineQuery {
  const parsed = parse({ ...rangeShape, bucket: bucket.optional() }, query);
  const { since, until } = range(parsed.since, parsed.until, now, retentionMs);
  const bucketMs = parsed.bucket ?? 60_000;
  const origin = Math.floor(since / bucketMs) * bucketMs;
  const buckets = Math.ceil((until - origin) / bucketMs);
  if (buckets > MAX_BUCKETS) {
    throw validationFailed([{ path: 'bucket', message: `gives ${buckets} buckets between since and until; at most ${MAX_BUCKETS} are answered: choose a larger bucket or a shorter range` }]);
  }
  return { since, until, bucketMs, origin, buckets };
}

/**
 * The path segment that, with `?messageId=`, names a message by query: ids `.` and `..` cannot
 * travel in a path — URL parsers (browsers, Node's URL, ingest's forwarding) resolve them, and
 * their %2E forms, as dot segments, so `/messages/..` reached `/admin/v1/` instead.
 */
export const MESSAGE_BY_QUERY = 'by-id';

/**
 * The message a `/messages/{messageId}` request names: the path's id, or the query's with
 * `/messages/by-id?messageId=…`. Without a query `by-id` is an id like any other, so a message
 * of that id stays reachable; no other parameter is taken.
 */
export function parseMessageLookup(pathId: unknown, query: unknown): string {
  const { messageId } = parse({ messageId: id.optional() }, query);
  if (messageId === undefined) return parseId('messageId', pathId);
  if (pathId !== MESSAGE_BY_QUERY) throw validationFailed([{ path: 'messageId', message: `is read from the query only with /messages/${MESSAGE_BY_QUERY}; give the id once` }]);
  return messageId;
}

/** A path parameter (message or destination id). */
export function parseId(name: string, value: unknown): string {
  const result = id.safeParse(value);
  if (result.success) return result.data;
  throw validationFailed([{ path: name, message: result.error.issues[0]?.message ?? 'is invalid' }]);
}
