/**
 * `tributary dlq list [--destination ID] [--since TIME] [--reason R] [--limit N] [--before CURSOR] [--json]`
 * and `tributary dlq replay --destination ID [--since TIME] [--reason R] [--dry-run]`.
 *
 * TIME is ISO-8601 with a time zone, a date, or a duration meaning that long ago (`2h`); a
 * relative time is turned into an absolute one here, on the operator's clock, so the list
 * and the replay that follows it mean the same moment — and so that the command printed for
 * the next page of a list names the same window as the page before it.
 */
import { InvalidArgumentError } from 'commander';
import { DEAD_LETTER_REASONS, isDeadLetterReason, parseTime, TimeError } from '@tributary/shared';
import type { CommandModule } from '../command.js';
import { formatTable } from '../format.js';

/** One dead letter as the admin API lists it (the fields the CLI prints). */
export interface ListedDeadLetter {
  id: string;
  deliveryId: string;
  destinationId: string;
  messageId: string;
  messageType: string;
  reason: string;
  status: number | null;
  error: string;
  deadAt: string;
  attempts: number;
  replayedAt: string | null;
}

export interface DeadLetterListAnswer {
  order: string;
  matched: number;
  deadLetters: ListedDeadLetter[];
  /** The cursor of the next (older) page; null (or absent) on the last page. */
  next?: string | null;
}

export interface DeadLetterListOptions {
  destination?: string;
  /** Absolute (timeOption has turned a duration into the time it meant). */
  since?: string;
  reason?: string;
  limit: number;
  before?: string;
  json?: boolean;
}

export interface ReplayAnswer {
  destination: string;
  matched: number;
  replayed: number;
  skipped: number;
  dryRun: boolean;
}

export function timeOption(now: () => number): (text: string) => string {
  return (text) => {
    try {
      return new Date(parseTime(text, now())).toISOString();
    } catch (error) {
      if (error instanceof TimeError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

export function reasonOption(text: string): string {
  if (!isDeadLetterReason(text)) throw new InvalidArgumentError(`use one of: ${Object.keys(DEAD_LETTER_REASONS).join(', ')}`);
  return text;
}

/** A --limit parser taking a whole number from 1 to `max` (what the route answers at most). */
export function limitUpTo(max: number): (text: string) => number {
  return (text) => {
    const limit = Number(text);
    if (!/^\d+$/.test(text) || limit < 1 || limit > max) throw new InvalidArgumentError(`use a whole number from 1 to ${max}`);
    return limit;
  };
}

export const limitOption = limitUpTo(1000);

/** The admin API query for one page of `dlq list`. */
export function listQuery(options: DeadLetterListOptions): URLSearchParams {
  const query = new URLSearchParams({ limit: String(options.limit) });
  if (options.destination !== undefined) query.set('destination', options.destination);
  if (options.since !== undefined) query.set('since', options.since);
  if (options.reason !== undefined) query.set('reason', options.reason);
  if (options.before !== undefined) query.set('before', options.before);
  return query;
}

/** A word as a POSIX shell reads it back unchanged: as it is when plain, else in single quotes. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command for the page after this one: the same filters (the cursor holds none) and limit,
 * and `--before` the answer's cursor. Global options (--url, --token) are left to the operator.
 */
export function nextPageCommand(options: DeadLetterListOptions, next: string): string {
  const flags: Array<[string, string | undefined]> = [
    ['--destination', options.destination],
    ['--since', options.since],
    ['--reason', options.reason],
    ['--limit', String(options.limit)],
    ['--before', next],
  ];
  const words = flags.flatMap(([flag, value]) => (value === undefined ? [] : [flag, shellWord(value)]));
  return ['tributary', 'dlq', 'list', ...words].join(' ');
}

const COLUMNS = ['DEAD AT', 'DESTINATION', 'MESSAGE', 'TYPE', 'REASON', 'STATUS', 'ATTEMPTS', 'REPLAYED', 'ID'] as const;

/** A table of the dead letters, each followed by its error, then what the table leaves out. */
export function formatDeadLetters(answer: DeadLetterListAnswer): string[] {
  if (answer.deadLetters.length === 0) {
    // Only a page after a cursor can be empty while some match: every match is newer.
    return [answer.matched === 0 ? 'no dead letters match' : `none older than the cursor (${plural(answer.matched, 'matching dead letter')} in all)`];
  }
  const rows = answer.deadLetters.map((letter) => [
    letter.deadAt,
    letter.destinationId,
    letter.messageId,
    letter.messageType,
    letter.reason,
    letter.status === null ? '-' : String(letter.status),
    String(letter.attempts),
    letter.replayedAt ?? 'no',
    letter.id,
  ]);
  const [header, ...tableRows] = formatTable(COLUMNS, rows);
  const lines = [header!];
  // Each dead letter's error goes on its own line, under its row.
  for (const [index, row] of tableRows.entries()) lines.push(row, `  ${answer.deadLetters[index]!.error}`);
  lines.push(countLine(answer));
  return lines;
}

function countLine({ deadLetters, matched, next }: DeadLetterListAnswer): string {
  const shown = deadLetters.length;
  if (shown >= matched) return `${plural(shown, 'matching dead letter')}, newest first`;
  const count = `${shown} of ${matched} matching dead letters, newest first`;
  // Without a next page, the others are on the pages before this one.
  return next ? count : `${count}; the last page`;
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

export function formatReplay(answer: ReplayAnswer): string {
  const already = `${answer.skipped} already replayed`;
  if (answer.dryRun) return `dry run: ${answer.replayed} of ${answer.matched} matching dead letters of ${answer.destination} would be replayed (${already}); nothing written`;
  return `replayed ${answer.replayed} of ${answer.matched} matching dead letters of ${answer.destination} (${already}, skipped)`;
}

export const dlqCommands: CommandModule = (program, context) => {
  const dlq = program.command('dlq').description('dead letters: deliveries that will not be attempted again unless replayed');
  const since = timeOption(Date.now);

  dlq
    .command('list')
    .description('list dead letters, newest first')
    .option('--destination <id>', 'only this destination')
    .option('--since <time>', 'only those that died at or after TIME (ISO-8601 with a zone, a date, or a duration: 2h = two hours ago)', since)
    .option('--reason <reason>', `only this reason (${Object.keys(DEAD_LETTER_REASONS).join(', ')})`, reasonOption)
    .option('--limit <n>', 'how many to show at most (1-1000)', limitOption, 100)
    .option('--before <cursor>', 'the next (older) page: the cursor the page before printed (give the same filters)')
    .option('--json', 'print the admin API answer as JSON (its "next" is the cursor for --before)')
    .action(async (options: DeadLetterListOptions) => {
      const answer = await context.client().request<DeadLetterListAnswer>('GET', `/dlq?${listQuery(options)}`);
      if (options.json) {
        context.out(JSON.stringify(answer, null, 2));
        return;
      }
      for (const line of formatDeadLetters(answer)) context.out(line);
      if (answer.next) context.out(`next page: ${nextPageCommand(options, answer.next)}`);
    });

  dlq
    .command('replay')
    .description("send a destination's dead letters back for delivery with a fresh retry window; each is replayed at most once")
    .requiredOption('--destination <id>', 'the destination whose dead letters are replayed')
    .option('--since <time>', 'only those that died at or after TIME (ISO-8601 with a zone, a date, or a duration: 2h = two hours ago)', since)
    .option('--reason <reason>', 'only this reason', reasonOption)
    .option('--dry-run', 'count what would be replayed without writing anything')
    .action(async (options: { destination: string; since?: string; reason?: string; dryRun?: boolean }) => {
      const answer = await context.client().request<ReplayAnswer>('POST', '/dlq/replay', {
        destination: options.destination,
        ...(options.since === undefined ? {} : { since: options.since }),
        ...(options.reason === undefined ? {} : { reason: options.reason }),
        dryRun: options.dryRun ?? false,
      });
      context.out(formatReplay(answer));
    });
};
