/**
 * `tributary audience sync NAME FILE --source ID [--json]`: an audience's full current
 * membership from an NDJSON file (one {"userId": …} or {"userId": …, "value": …} per line;
 * `-` reads stdin; a .gz file is sent gzip-encoded as it is), streamed to the admin API —
 * any size. Prints what changed.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { CommandModule } from '../command.js';
import { CliError, EXIT_FAILED } from '../errors.js';

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

/** Exit 2, as for config apply: a file that cannot be read is not a file the server refused (exit 1). */
function unreadable(file: string, error: unknown): CliError {
  return new CliError(`${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, EXIT_FAILED);
}

/**
 * Opens the members file before anything is sent. Opened by the stream instead, a missing
 * file failed with an 'error' event before fetch listened for one: a stack trace, and exit 1.
 */
export async function openMembersFile(file: string): Promise<FileHandle> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    // A directory opens, and fails only at the first read, once connected: refused here.
    if ((await handle.stat()).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    return handle;
  } catch (error) {
    await handle?.close();
    throw unreadable(file, error);
  }
}

/**
 * The upload body: the chunks of `read()`, created at the first pull, when fetch listens. A
 * read that fails part-way (a disk error, a file on a vanished mount) is handed to `failed`
 * and ends the upload: fetch reports it only as a failed request.
 */
export async function* membersBody(file: string, read: () => AsyncIterable<Uint8Array>, failed: (error: CliError) => void): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of read()) yield chunk;
  } catch (error) {
    const refusal = unreadable(file, error);
    failed(refusal);
    throw refusal;
  }
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
      const handle = file === '-' ? undefined : await openMembersFile(file);
      let readFailure: CliError | undefined;
      const body = membersBody(file === '-' ? 'stdin' : file, () => handle?.createReadStream() ?? process.stdin, (error) => (readFailure = error));
      const query = new URLSearchParams({ sourceId: options.source });
      let answer: AudienceSyncAnswer;
      try {
        answer = await context
          .client()
          .upload<AudienceSyncAnswer>('PUT', `/audiences/${encodeURIComponent(name)}/members?${query}`, {
            'content-type': 'application/x-ndjson',
            ...(gzip ? { 'content-encoding': 'gzip' } : {}),
          }, body);
      } catch (error) {
        // The client calls a failed body "cannot reach the ingest service"; the file is what failed.
        throw readFailure ?? error;
      } finally {
        // Closed by the stream once read to the end; not if the request failed before reading it.
        await handle?.close();
      }
      context.out(options.json ? JSON.stringify(answer, null, 2) : formatAudienceSync(answer));
    });
};
