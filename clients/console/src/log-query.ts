/**
 * The delivery-log search: the form's fields, kept in the page URL so a search can be shared,
 * turned into `GET /attempts` queries, and the cursor trail that lets the table go back as
 * well as forward (the API's cursors only lead to older attempts).
 */
import type { AttemptQuery } from './api';
import type { Params } from './route';

export interface LogFilter {
  destination: string;
  status: string;
  userId: string;
  messageId: string;
  /** `YYYY-MM-DDTHH:MM` as a datetime-local input holds it, read as UTC; empty = the API's default. */
  since: string;
  until: string;
}

export const EMPTY_FILTER: LogFilter = { destination: '', status: '', userId: '', messageId: '', since: '', until: '' };

export const FILTER_FIELDS = Object.keys(EMPTY_FILTER) as Array<keyof LogFilter>;

/** What the status field offers; any HTTP status (`503`) may be typed as well. */
export const STATUS_CHOICES: ReadonlyArray<{ value: string; label: string }> = [
  { value: 'delivered', label: 'delivered' },
  { value: 'retry', label: 'retry (failed, will be retried)' },
  { value: 'deferred', label: 'deferred (no request: circuit open or backlog)' },
  { value: 'dead', label: 'dead (dead-lettered)' },
  { value: '2xx', label: '2xx' },
  { value: '4xx', label: '4xx' },
  { value: '5xx', label: '5xx' },
  { value: 'error', label: 'error (no HTTP status: timeout, connection, TLS)' },
];

export const PAGE_SIZE = 50;

export function filterFromParams(params: Params): LogFilter {
  const filter = { ...EMPTY_FILTER };
  for (const field of FILTER_FIELDS) filter[field] = (params[field] ?? '').trim();
  return filter;
}

export function filterToParams(filter: LogFilter): Record<string, string | undefined> {
  const params: Record<string, string | undefined> = {};
  for (const field of FILTER_FIELDS) {
    const value = filter[field].trim();
    if (value !== '') params[field] = value;
  }
  return params;
}

/**
 * A datetime-local value (`2026-11-25T10:00`, seconds optional) read as UTC, as ISO-8601; a
 * value that already names a zone is kept as it is. Undefined for an empty or unreadable one.
 */
export function inputTimeToIso(value: string): string | undefined {
  const text = value.trim();
  if (text === '') return undefined;
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(text);
  const time = new Date(zoned ? text : `${text}Z`);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

/** The problems a person must fix before the search is sent; empty when there are none. */
export function filterProblems(filter: LogFilter): string[] {
  const problems: string[] = [];
  const since = inputTimeToIso(filter.since);
  const until = inputTimeToIso(filter.until);
  if (filter.since.trim() !== '' && !since) problems.push('"since" is not a date and time');
  if (filter.until.trim() !== '' && !until) problems.push('"until" is not a date and time');
  if (since && until && since > until) problems.push('"since" is after "until"');
  const status = filter.status.trim();
  if (status !== '' && !STATUS_CHOICES.some((choice) => choice.value === status) && !/^[1-5]\d\d$/.test(status)) {
    problems.push(`"status" must be one of ${STATUS_CHOICES.map((choice) => choice.value).join(', ')} or an HTTP status such as 503`);
  }
  return problems;
}

/**
 * The query for one page. `pinnedUntil` stands in for an empty "until": the API takes "now" for
 * it (and "since" an hour before), which moves between pages, so pages fetched a while apart
 * would look at different hours and the oldest attempts of the first search would be skipped.
 */
export function filterToQuery(filter: LogFilter, cursor?: string, pinnedUntil?: string): AttemptQuery {
  const query: AttemptQuery = { limit: PAGE_SIZE };
  if (filter.destination.trim()) query.destination = filter.destination.trim();
  if (filter.status.trim()) query.status = filter.status.trim();
  if (filter.userId.trim()) query.userId = filter.userId.trim();
  if (filter.messageId.trim()) query.messageId = filter.messageId.trim();
  const since = inputTimeToIso(filter.since);
  const until = inputTimeToIso(filter.until);
  if (since) query.since = since;
  if (until) query.until = until;
  else if (pinnedUntil) query.until = pinnedUntil;
  if (cursor) query.cursor = cursor;
  return query;
}

/**
 * Where the table is in the result: the cursor of each page seen so far (the first page has
 * none). Going forward appends the answer's nextCursor; going back drops the last one.
 */
export interface CursorTrail {
  cursors: ReadonlyArray<string | undefined>;
}

export const FIRST_PAGE: CursorTrail = { cursors: [undefined] };

export function currentCursor(trail: CursorTrail): string | undefined {
  return trail.cursors[trail.cursors.length - 1];
}

export function pageNumber(trail: CursorTrail): number {
  return trail.cursors.length;
}

export function olderPage(trail: CursorTrail, nextCursor: string | null): CursorTrail {
  return nextCursor ? { cursors: [...trail.cursors, nextCursor] } : trail;
}

export function newerPage(trail: CursorTrail): CursorTrail {
  return trail.cursors.length > 1 ? { cursors: trail.cursors.slice(0, -1) } : trail;
}
