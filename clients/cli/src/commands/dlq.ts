/**
 * `tributary dlq list [--destination ID] [--since TIME] [--reason R] [--limit N] [--json]`
 * and `tributary dlq replay --destination ID [--since TIME] [--reason R] [--dry-run]`.
 *
 * TIME is ISO-8601 with a time zone, a date, or a duration meaning that long ago (`2h`); a
 * relative time is turned into an absolute one here, on the operator's clock, so the list
 * and the replay that follows it mean the same moment.
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

const COLUMNS = ['DEAD AT', 'DESTINATION', 'MESSAGE', 'TYPE', 'REASON', 'STATUS', 'ATTEMPTS', 'REPLAYED', 'ID'] as const;

/** A table of the dead letters, each followed by its error, then what the table leaves out. */
export function formatDeadLetters(answer: DeadLetterListAnswer): string[] {
  if (answer.deadLetters.length === 0) return ['no dead letters match'];
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
  const shown = answer.deadLetters.length;
  lines.push(shown < answer.matched ? `${shown} of ${answer.matched} matching dead letters, newest first; --limit shows more` : `${shown} matching dead letter${shown === 1 ? '' : 's'}, newest first`);
  return lines;
}

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
    .option('--json', 'print the admin API answer as JSON')
    .action(async (options: { destination?: string; since?: string; reason?: string; limit: number; json?: boolean }) => {
      const query = new URLSearchParams({ limit: String(options.limit) });
      if (options.destination !== undefined) query.set('destination', options.destination);
      if (options.since !== undefined) query.set('since', options.since);
      if (options.reason !== undefined) query.set('reason', options.reason);
      const answer = await context.client().request<DeadLetterListAnswer>('GET', `/dlq?${query}`);
      if (options.json) context.out(JSON.stringify(answer, null, 2));
      else for (const line of formatDeadLetters(answer)) context.out(line);
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
