/**
 * `tributary destinations health [ID] [--json]`: each destination's circuit state (closed,
 * open, half_open) and backlog, as the dispatchers report them through the admin API.
 * `tributary destinations summary [ID] [--since TIME] [--until TIME] [--json]`: how
 * deliveries went over a time range, from the delivery log.
 */
import type { CommandModule } from '../command.js';
import type { DeliverySummaries, DeliverySummary } from '../delivery-log/answers.js';
import { formatSummaries } from '../delivery-log/summary.js';
import { formatTable } from '../format.js';
import { timeOption } from './dlq.js';

interface Backlog {
  firstAttempts: number;
  retries: number;
  inFlight: number;
}

export interface DestinationHealthAnswer {
  destinationId: string;
  state: string;
  backlog: Backlog;
  instances: Array<{
    instanceId: string;
    state: string;
    openUntil: string | null;
    consecutiveFailures: number;
    lastError: string | null;
    /** Absent from servers older than the field. */
    congestedSince?: string | null;
    deferrals: number;
    stale: boolean;
  }>;
  updatedAt: string | null;
}

const COLUMNS = ['DESTINATION', 'CIRCUIT', 'OPEN UNTIL', 'QUEUED', 'RETRIES', 'IN FLIGHT', 'DEFERRED', 'LAST ERROR'] as const;

/**
 * A table row per destination; the open-until time and last error come from the instance that
 * reports the worst state. A closed circuit whose destination is congested somewhere (attempts
 * stalled, or every request slot taken with deliveries waiting: a receiver that hangs or is
 * slower than its traffic) reads `closed, congested`.
 */
export function formatHealth(destinations: DestinationHealthAnswer[]): string[] {
  if (destinations.length === 0) return ['no destinations'];
  const rows = destinations.map((health) => {
    const fresh = health.instances.filter((instance) => !instance.stale);
    const worst = fresh.find((instance) => instance.state === health.state);
    return [
      health.destinationId,
      health.state === 'closed' && fresh.some((instance) => instance.congestedSince) ? 'closed, congested' : health.state,
      worst?.openUntil ?? '-',
      String(health.backlog.firstAttempts),
      String(health.backlog.retries),
      String(health.backlog.inFlight),
      String(fresh.reduce((total, instance) => total + instance.deferrals, 0)),
      worst?.lastError ?? '-',
    ];
  });
  const stale = destinations.reduce((total, health) => total + health.instances.filter((instance) => instance.stale).length, 0);
  const lines = formatTable(COLUMNS, rows);
  if (stale > 0) lines.push(`${stale} stale report${stale === 1 ? '' : 's'} from dispatchers that stopped without saying so (not counted; --json shows them)`);
  return lines;
}

export const destinationCommands: CommandModule = (program, context) => {
  const destinations = program.command('destinations').description('destinations as the pipeline sees them');
  destinations
    .command('health')
    .description('circuit state and backlog of every destination, or of one')
    .argument('[id]', 'only this destination')
    .option('--json', 'print the admin API answer as JSON')
    .action(async (id: string | undefined, options: { json?: boolean }) => {
      const client = context.client();
      const answer =
        id === undefined
          ? (await client.request<{ destinations: DestinationHealthAnswer[] }>('GET', '/destination-health')).destinations
          : [await client.request<DestinationHealthAnswer>('GET', `/destinations/${encodeURIComponent(id)}/health`)];
      if (options.json) context.out(JSON.stringify(id === undefined ? { destinations: answer } : answer[0], null, 2));
      else for (const line of formatHealth(answer)) context.out(line);
    });

  const time = timeOption(Date.now);
  destinations
    .command('summary')
    .description('success rate, delivery latency, retries pending, dead letters and circuit of every destination, or of one, over a time range (default: the last hour)')
    .argument('[id]', 'only this destination')
    .option('--since <time>', 'from TIME (ISO-8601 with a zone, a date, or a duration: 2h = two hours ago; default: an hour before --until)', time)
    .option('--until <time>', 'up to TIME, exclusive (default: now)', time)
    .option('--json', 'print the admin API answer as JSON')
    .action(async (id: string | undefined, options: { since?: string; until?: string; json?: boolean }) => {
      const client = context.client();
      const query = new URLSearchParams();
      if (options.since !== undefined) query.set('since', options.since);
      if (options.until !== undefined) query.set('until', options.until);
      const suffix = query.size > 0 ? `?${query}` : '';
      const answer: DeliverySummaries | DeliverySummary =
        id === undefined
          ? await client.request<DeliverySummaries>('GET', `/delivery-summary${suffix}`)
          : await client.request<DeliverySummary>('GET', `/destinations/${encodeURIComponent(id)}/summary${suffix}`);
      if (options.json) context.out(JSON.stringify(answer, null, 2));
      else for (const line of formatSummaries('destinations' in answer ? answer.destinations : [answer], answer)) context.out(line);
    });
};
