/**
 * `tributary messages tail`: the live tail of accepted messages. The API answers newest
 * first with a cursor; the tail prints each answer oldest first, so the newest message is
 * the last line, as `tail -f` would have it, and asks again with the cursor every second.
 * Table and loop are pure: the loop is given its fetch, sleep and printer.
 */
import { CliError } from '../errors.js';
import { columnWidths, formatRow } from '../format.js';
import type { TailMessage, TailPage } from './answers.js';
import { cell, printable } from './text.js';

export const TAIL_POLL_MS = 1_000;
/** Each poll after the first asks for the most the route answers, so a busy second loses as little as it can. */
export const TAIL_POLL_LIMIT = 200;

/** The event, or the page or screen name, or else the type. */
export function messageLabel(message: Pick<TailMessage, 'type' | 'event' | 'message'>): string {
  if (message.event !== null && message.event !== '') return printable(message.event);
  const name = message.message.name;
  if (typeof name === 'string' && name !== '') return printable(name);
  return message.type;
}

/** The userId, else the anonymousId marked as such. */
export function whoOf(message: Pick<TailMessage, 'userId' | 'anonymousId'>): string {
  if (message.userId !== null) return printable(message.userId);
  if (message.anonymousId !== null) return `anon ${printable(message.anonymousId)}`;
  return '-';
}

const COLUMNS = ['RECEIVED AT', 'SOURCE', 'TYPE', 'EVENT', 'USER', 'MESSAGE ID'] as const;
/** Room for typical ids and event names, so the widths fixed by the first answer suit the later ones too. */
const MINIMUM_WIDTHS = [24, 10, 8, 20, 20, 0];

/** Lines for a tail that grows: the header and column widths come from the first messages. */
export class TailTable {
  private widths: number[] | undefined;

  /** `messages` oldest first. */
  lines(messages: readonly TailMessage[]): string[] {
    const rows = messages.map((message) => [message.receivedAt, cell(message.sourceId), message.type, messageLabel(message), whoOf(message), cell(message.messageId)]);
    const lines: string[] = [];
    if (this.widths === undefined && rows.length > 0) {
      this.widths = columnWidths(COLUMNS, rows, MINIMUM_WIDTHS);
      lines.push(formatRow(this.widths, COLUMNS));
    }
    return [...lines, ...rows.map((row) => formatRow(this.widths!, row))];
  }
}

export interface FollowOptions {
  /** Messages the first answer shows. */
  firstLimit: number;
  /** Print what there is now and stop. */
  once: boolean;
  /** Aborted by Ctrl-C: the tail stops after the request in flight. */
  signal: AbortSignal;
  fetchPage(after: string | undefined, limit: number): Promise<TailPage>;
  /** Resolves after `ms`, or at once when the signal aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** New messages, oldest first. */
  print(messages: readonly TailMessage[]): void;
  warn(line: string): void;
}

/** What the tail waits out: the delivery log or ingest unavailable for a moment, or ingest not reachable. */
function isPassing(error: unknown): boolean {
  return error instanceof CliError && (error.status === undefined || error.status === 503);
}

/**
 * Follows the tail until the signal aborts (or once). A failing first request ends it — a
 * wrong URL or token should say so at once — and so does any refusal; a later outage of the
 * delivery log or of ingest is reported once, waited out, and reported over when it ends.
 */
export async function followTail(options: FollowOptions): Promise<void> {
  let cursor: string | undefined;
  let outage = false;
  for (;;) {
    const first = cursor === undefined;
    let page: TailPage | undefined;
    try {
      page = await options.fetchPage(cursor, first ? options.firstLimit : TAIL_POLL_LIMIT);
    } catch (error) {
      if (first || options.once || !isPassing(error)) throw error;
      if (!outage) options.warn(`tail paused: ${(error as Error).message}; asking again every ${TAIL_POLL_MS / 1_000}s (Ctrl-C stops)`);
      outage = true;
    }
    if (page) {
      if (outage) options.warn('tail resumed');
      outage = false;
      options.print([...page.messages].reverse());
      if (!first && page.messages.length >= TAIL_POLL_LIMIT) {
        options.warn(`${TAIL_POLL_LIMIT} or more messages arrived within one poll: older ones among them may have been skipped (--source narrows the tail)`);
      }
      cursor = page.cursor;
    }
    if (options.once || options.signal.aborted) return;
    await options.sleep(TAIL_POLL_MS, options.signal);
    if (options.signal.aborted) return;
  }
}

/** Resolves after `ms`, or as soon as the signal aborts. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
