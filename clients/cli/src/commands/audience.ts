/**
 * `tributary audience sync NAME FILE --source ID [--json]`: an audience's full current
 * membership from an NDJSON file (one {"userId": …} or {"userId": …, "value": …} per line;
 * `-` reads stdin; a .gz file is sent gzip-encoded as it is), streamed to the admin API —
 * any size. Prints what changed.
 */
import { createReadStream } from 'node:fs';
import type { CommandModule } from '../command.js';

export interface AudienceSyncAnswer {
  audience: string;
  trait: string;
  firstSync: boolean;
  members: number;
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  messages: number;
}

export function formatAudienceSync(answer: AudienceSyncAnswer): string {
  const first = answer.firstSync ? ' (first sync)' : '';
  return `${answer.audience}${first}: ${answer.members} members, trait ${answer.trait}; ${answer.added} joined, ${answer.removed} left, ${answer.changed} changed value, ${answer.unchanged} unchanged → ${answer.messages} Identify messages`;
}

export const audienceCommands: CommandModule = (program, context) => {
  const audience = program.command('audience').description('Personas audiences: full-membership syncs that become Identify calls');
  audience
    .command('sync <name> <file>')
    .description('sync an audience from an NDJSON file of members (- for stdin; .gz sent compressed); only changes are sent on')
    .requiredOption('--source <id>', 'the source the Identify messages are attributed to')
    .option('--json', 'print the admin API answer as JSON')
    .action(async (name: string, file: string, options: { source: string; json?: boolean }) => {
      const gzip = file.endsWith('.gz');
      const body = file === '-' ? process.stdin : createReadStream(file);
      const query = new URLSearchParams({ sourceId: options.source });
      const answer = await context
        .client()
        .upload<AudienceSyncAnswer>('PUT', `/audiences/${encodeURIComponent(name)}/members?${query}`, {
          'content-type': 'application/x-ndjson',
          ...(gzip ? { 'content-encoding': 'gzip' } : {}),
        }, body);
      context.out(options.json ? JSON.stringify(answer, null, 2) : formatAudienceSync(answer));
    });
};
