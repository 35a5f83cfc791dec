/**
 * `tributary quarantine list [--topic T] [--service S] [--reason R] [--since TIME] [--limit N] [--json]`:
 * the records the services set aside (undecodable, invalid, too large), newest first.
 */
import type { CommandModule } from '../command.js';
import { formatTable } from '../format.js';
import { limitOption, timeOption } from './dlq.js';

export interface ListedQuarantined {
  id: string;
  service: string;
  sourceTopic: string;
  sourcePartition: number;
  sourceOffset: number;
  reason: string;
  error: string;
  key: string | null;
  valueSize: number;
  quarantinedAt: string;
}

export interface QuarantineListAnswer {
  order: string;
  matched: number;
  records: ListedQuarantined[];
}

const COLUMNS = ['QUARANTINED AT', 'SERVICE', 'FROM', 'REASON', 'KEY', 'BYTES', 'ID'] as const;

/** A table of the records, each followed by its error, then what the table leaves out. */
export function formatQuarantine(answer: QuarantineListAnswer): string[] {
  if (answer.records.length === 0) return ['nothing quarantined matches'];
  const rows = answer.records.map((record) => [
    record.quarantinedAt,
    record.service,
    `${record.sourceTopic}[${record.sourcePartition}]@${record.sourceOffset}`,
    record.reason,
    record.key === null ? '-' : record.key.length > 40 ? `${record.key.slice(0, 39)}…` : record.key,
    String(record.valueSize),
    record.id,
  ]);
  const [header, ...tableRows] = formatTable(COLUMNS, rows);
  const lines = [header!];
  for (const [index, row] of tableRows.entries()) lines.push(row, `  ${answer.records[index]!.error}`);
  const shown = answer.records.length;
  lines.push(shown < answer.matched ? `${shown} of ${answer.matched} matching records, newest first; --limit shows more` : `${shown} matching record${shown === 1 ? '' : 's'}, newest first`);
  return lines;
}

export const quarantineCommands: CommandModule = (program, context) => {
  const quarantine = program.command('quarantine').description('records the services could never handle, set aside with their reasons');
  quarantine
    .command('list')
    .description('list quarantined records, newest first')
    .option('--topic <topic>', 'only records that came from this topic')
    .option('--service <service>', 'only records this service set aside (router, dispatcher, retry-scheduler)')
    .option('--reason <reason>', 'only this reason (not_framed, unknown_schema, too_deep, too_large, …)')
    .option('--since <time>', 'only those quarantined at or after TIME (ISO-8601 with a zone, a date, or a duration: 2h = two hours ago)', timeOption(Date.now))
    .option('--limit <n>', 'how many to show at most (1-1000)', limitOption, 100)
    .option('--json', 'print the admin API answer as JSON')
    .action(async (options: { topic?: string; service?: string; reason?: string; since?: string; limit: number; json?: boolean }) => {
      const query = new URLSearchParams({ limit: String(options.limit) });
      for (const name of ['topic', 'service', 'reason', 'since'] as const) {
        const value = options[name];
        if (value !== undefined) query.set(name, value);
      }
      const answer = await context.client().request<QuarantineListAnswer>('GET', `/quarantine?${query}`);
      if (options.json) context.out(JSON.stringify(answer, null, 2));
      else for (const line of formatQuarantine(answer)) context.out(line);
    });
};
