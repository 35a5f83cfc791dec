/**
 * `tributary attempts [--destination ID] [--source ID] [--status S] [--user-id U]
 * [--message-id M] [--since TIME] [--until TIME] [--limit N] [--cursor C] [--all] [--json]`:
 * the delivery log's attempts, newest first, a page at a time or (`--all`) every page.
 *
 * The range is pinned here, on the CLI's clock: `--until` defaults to now and `--since` to
 * an hour before it, and both go with every page. Left to the API, each page's "now" would
 * move the default window on, and `--all` would miss the oldest attempts of the range.
 */
import { InvalidArgumentError } from 'commander';
import type { CommandModule } from '../command.js';
import { CliError, EXIT_FAILED } from '../errors.js';
import type { AttemptPage } from '../delivery-log/answers.js';
import { AttemptJsonStream, AttemptTable } from '../delivery-log/attempts.js';
import { limitUpTo, timeOption } from './dlq.js';

export const DEFAULT_WINDOW_MS = 3_600_000;

const OUTCOMES = ['delivered', 'retry', 'deferred', 'dead', 'error'];

/** What the API's status filter takes: an outcome, `error`, an HTTP status or a class. */
export function statusOption(text: string): string {
  if (OUTCOMES.includes(text) || /^[1-5]\d\d$/.test(text) || /^[1-5]xx$/i.test(text)) return text;
  throw new InvalidArgumentError(`use an outcome (${OUTCOMES.slice(0, 4).join(', ')}), error (no HTTP status came back), an HTTP status (503) or a class (5xx)`);
}

/** The range every page is asked for: the options as given, the defaults fixed now. */
export function searchRange(options: { since?: string; until?: string }, now: number): { since: string; until: string } {
  const until = options.until ?? new Date(now).toISOString();
  const since = options.since ?? new Date(Date.parse(until) - DEFAULT_WINDOW_MS).toISOString();
  return { since, until };
}

interface AttemptOptions {
  destination?: string;
  source?: string;
  status?: string;
  userId?: string;
  messageId?: string;
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
  all?: boolean;
  json?: boolean;
}

export function attemptQuery(options: AttemptOptions, range: { since: string; until: string }, cursor: string | undefined): URLSearchParams {
  const query = new URLSearchParams();
  const filters = { destination: options.destination, source: options.source, status: options.status, userId: options.userId, messageId: options.messageId };
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, value);
  query.set('since', range.since);
  query.set('until', range.until);
  query.set('limit', String(options.limit));
  if (cursor !== undefined) query.set('cursor', cursor);
  return query;
}

export const attemptCommands: CommandModule = (program, context) => {
  const time = timeOption(Date.now);
  program
    .command('attempts')
    .description('search the delivery log\'s attempts, newest first')
    .option('--destination <id>', 'only this destination\'s attempts')
    .option('--source <id>', 'only attempts of this source\'s messages')
    .option('--status <status>', 'delivered, retry, deferred, dead, error (no HTTP status: timeout, connection, TLS), an HTTP status (503) or a class (5xx)', statusOption)
    .option('--user-id <id>', 'only attempts of this user\'s messages')
    .option('--message-id <id>', 'only attempts of this message (messages show has its whole history)')
    .option('--since <time>', 'from TIME (ISO-8601 with a zone, a date, or a duration: 2h = two hours ago; default: an hour before --until)', time)
    .option('--until <time>', 'up to TIME, exclusive (default: now)', time)
    .option('--limit <n>', 'attempts per page (1-500)', limitUpTo(500), 50)
    .option('--cursor <cursor>', 'the page after the one that printed this cursor (give the same filters, --since and --until)')
    .option('--all', 'follow the pages to the last one')
    .option('--json', 'print the admin API answer as JSON (with --all, one answer holding every page)')
    .action(async (options: AttemptOptions) => {
      const client = context.client();
      const range = searchRange(options, Date.now());
      const table = new AttemptTable();
      const json = new AttemptJsonStream(context.out);
      let cursor = options.cursor;
      for (;;) {
        const page = await client.request<AttemptPage>('GET', `/attempts?${attemptQuery(options, range, cursor)}`);
        if (options.json && !options.all) {
          context.out(JSON.stringify(page, null, 2));
          return;
        }
        if (options.json) json.add(page.attempts);
        else for (const line of table.page(page.attempts)) context.out(line);
        if (!options.all || page.nextCursor === null) {
          if (options.json) json.end();
          else context.out(table.footer(range, options.all ? null : page.nextCursor));
          return;
        }
        // A cursor that does not move would page forever.
        if (page.nextCursor === cursor) throw new CliError('the admin API answered the same cursor twice; stopping', EXIT_FAILED);
        cursor = page.nextCursor;
      }
    });
};
