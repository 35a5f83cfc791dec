/**
 * `tributary messages show MESSAGE_ID [--json]`: what happened to one message, from the
 * delivery log. `tributary messages tail [--source ID] [--limit N] [--once] [--json]`: the
 * messages ingest accepts, followed live until Ctrl-C (or printed once).
 */
import type { CommandModule } from '../command.js';
import type { MessageHistory, TailPage } from '../delivery-log/answers.js';
import { formatMessageHistory } from '../delivery-log/message.js';
import { followTail, sleepUnlessAborted, TailTable } from '../delivery-log/tail.js';
import { limitUpTo } from './dlq.js';

/**
 * The admin path of one message. An id that is a dot segment ("." or "..") cannot be a path
 * segment — URL parsing resolves it, %2E spellings too — so it goes as a query parameter.
 */
export function messagePath(messageId: string): string {
  if (messageId === '.' || messageId === '..') return `/messages/by-id?messageId=${encodeURIComponent(messageId)}`;
  return `/messages/${encodeURIComponent(messageId)}`;
}

export const messageCommands: CommandModule = (program, context) => {
  const messages = program.command('messages').description('the delivery log: the messages ingest accepted and what became of them');

  messages
    .command('show')
    .description('what happened to a message: as accepted, the routing per destination, each delivery\'s state and its attempts with each URL\'s result')
    .argument('<message-id>', 'the messageId the producer sent')
    .option('--json', 'print the admin API answer as JSON')
    .action(async (messageId: string, options: { json?: boolean }) => {
      const answer = await context.client().request<MessageHistory>('GET', messagePath(messageId));
      if (options.json) context.out(JSON.stringify(answer, null, 2));
      else for (const line of formatMessageHistory(answer)) context.out(line);
    });

  messages
    .command('tail')
    .description('follow the messages ingest accepts, newest last, asking every second until Ctrl-C')
    .option('--source <id>', 'only this source\'s messages')
    .option('--limit <n>', 'how many of the latest messages to show first (1-200)', limitUpTo(200), 20)
    .option('--once', 'print the latest messages and exit')
    .option('--json', 'one JSON object per message and line (NDJSON), oldest first')
    .action(async (options: { source?: string; limit: number; once?: boolean; json?: boolean }) => {
      const client = context.client();
      const table = new TailTable();
      let answered = false;
      await followTail({
        firstLimit: options.limit,
        once: options.once ?? false,
        // Only a tail that follows takes Ctrl-C over; --once stops the ordinary way.
        signal: options.once ? new AbortController().signal : context.interruptSignal(),
        fetchPage: (after, limit) => {
          const query = new URLSearchParams({ limit: String(limit) });
          if (options.source !== undefined) query.set('source', options.source);
          if (after !== undefined) query.set('after', after);
          return client.request<TailPage>('GET', `/messages?${query}`);
        },
        sleep: sleepUnlessAborted,
        print: (batch) => {
          // An empty log says so rather than leaving the screen blank.
          if (!answered && batch.length === 0 && !options.json) {
            if (options.once) context.out('no messages in the delivery log');
            else context.err('tributary: no messages yet; waiting for some (Ctrl-C stops)');
          }
          answered = true;
          if (options.json) for (const message of batch) context.out(JSON.stringify(message));
          else for (const line of table.lines(batch)) context.out(line);
        },
        warn: (line) => context.err(`tributary: ${line}`),
      });
    });
};
