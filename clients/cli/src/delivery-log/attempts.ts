/**
 * Attempts as `tributary attempts` and `tributary messages show` print them: what the
 * attempt was, how it ended, and each URL's result. Pure.
 */
import { columnWidths, formatRow } from '../format.js';
import type { Attempt, AttemptTarget } from './answers.js';
import { cell, duration, plural, printable, quoted } from './text.js';

/** How much of a receiver's response body a line shows. */
export const BODY_CHARS = 80;

/** `#2` for a request, else what it was instead: `deferred`, `preflight`. */
export function attemptLabel(attempt: Pick<Attempt, 'kind' | 'attempt'>): string {
  return attempt.kind === 'attempt' ? `#${attempt.attempt}` : attempt.kind;
}

/** The HTTP status; `error` when a request went out and no status came back (timeout, connection, TLS). */
export function statusCell(attempt: Pick<Attempt, 'kind' | 'status'>): string {
  if (attempt.status !== null) return String(attempt.status);
  return attempt.kind === 'attempt' ? 'error' : '-';
}

/** Why it ended as it did and what comes next, `; `-separated; empty for a plain delivery. */
export function attemptDetail(attempt: Attempt): string {
  const parts: string[] = [];
  // A deferral's error already says so ("deferred: circuit open; last error: …").
  if (attempt.error !== null) parts.push(printable(attempt.error));
  else if (attempt.kind === 'deferred') parts.push(`deferred: ${cell(attempt.deferReason)}`);
  if (attempt.outcome === 'dead') parts.push(`dead letter: ${cell(attempt.deadReason)}`);
  if (attempt.nextAttemptAt !== null) parts.push(`next attempt ${attempt.nextAttemptAt}${attempt.tier === null ? '' : ` (tier ${printable(attempt.tier)})`}`);
  if (attempt.replays > 0) parts.push(`replayed ${plural(attempt.replays, 'time')} before`);
  return parts.join('; ');
}

/** `webhooks[0] https://hooks.example.com: http_error 503 in 11ms; HTTP 503; retry after 30s; body "busy"`. */
export function targetLine(target: AttemptTarget): string {
  const status = target.status === null ? '' : ` ${target.status}`;
  const parts = [`webhooks[${target.urlIndex}] ${printable(target.origin)}: ${printable(target.outcome)}${status} in ${duration(target.durationMs)}`];
  // An error that only repeats the status says nothing new.
  if (target.error !== null && target.error !== `HTTP ${target.status}`) parts.push(printable(target.error));
  if (target.retryAfterMs !== null) parts.push(`retry after ${duration(target.retryAfterMs)}`);
  if (target.responseBody !== null && target.responseBody !== '') parts.push(`body ${quoted(target.responseBody, BODY_CHARS)}`);
  return parts.join('; ');
}

const SEARCH_COLUMNS = ['STARTED AT', 'DESTINATION', 'MESSAGE', 'ATTEMPT', 'OUTCOME', 'STATUS', 'DURATION', 'ID'] as const;

/**
 * The search's table, printed a page at a time (so `--all` shows the first page at once and
 * holds one page in memory): the header and the column widths come from the first page.
 * Each attempt's detail goes on its own line beneath its row, as `dlq list` prints errors.
 */
export class AttemptTable {
  private widths: number[] | undefined;
  private shown = 0;

  page(attempts: readonly Attempt[]): string[] {
    const rows = attempts.map((attempt) => [
      attempt.startedAt,
      cell(attempt.destinationId),
      cell(attempt.messageId),
      attemptLabel(attempt),
      attempt.outcome,
      statusCell(attempt),
      duration(attempt.durationMs),
      attempt.id,
    ]);
    const lines: string[] = [];
    if (this.widths === undefined && rows.length > 0) {
      this.widths = columnWidths(SEARCH_COLUMNS, rows);
      lines.push(formatRow(this.widths, SEARCH_COLUMNS));
    }
    for (const [index, row] of rows.entries()) {
      lines.push(formatRow(this.widths!, row));
      const detail = attemptDetail(attempts[index]!);
      if (detail !== '') lines.push(`  ${detail}`);
    }
    this.shown += rows.length;
    return lines;
  }

  /** The closing line: how many were shown over which range, and how to see more. */
  footer(range: { since: string; until: string }, nextCursor: string | null): string {
    const between = `from ${range.since} to ${range.until}`;
    if (this.shown === 0) return `no attempts match ${between}`;
    const shown = `${plural(this.shown, 'attempt')} ${between}, newest first`;
    if (nextCursor === null) return shown;
    return `${shown}; more match: --all lists them all, --cursor ${nextCursor} the next page`;
  }
}

/**
 * `{"attempts": [...], "nextCursor": null}` written an attempt at a time, exactly as
 * JSON.stringify(answer, null, 2) would write it whole: `--all --json` is the API's answer
 * shape over every page, without holding every page.
 */
export class AttemptJsonStream {
  private pending: string | undefined;
  private started = false;

  constructor(private readonly out: (text: string) => void) {}

  add(attempts: readonly Attempt[]): void {
    for (const attempt of attempts) {
      if (!this.started) {
        this.out('{\n  "attempts": [');
        this.started = true;
      }
      // The comma after an attempt is written once the next one is known to follow.
      if (this.pending !== undefined) this.out(`${this.pending},`);
      this.pending = JSON.stringify(attempt, null, 2).replace(/^/gm, '    ');
    }
  }

  end(): void {
    if (!this.started) {
      this.out('{\n  "attempts": [],\n  "nextCursor": null\n}');
      return;
    }
    this.out(`${this.pending}\n  ],\n  "nextCursor": null\n}`);
  }
}
