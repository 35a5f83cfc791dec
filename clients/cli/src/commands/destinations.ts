/**
 * `tributary destinations health [ID] [--json]`: each destination's circuit state (closed,
 * open, half_open) and backlog, as the dispatchers report them through the admin API.
 */
import type { CommandModule } from '../command.js';
import { formatTable } from '../format.js';

interface Backlog {
  firstAttempts: number;
  retries: number;
  inFlight: number;
}

export interface DestinationHealthAnswer {
  destinationId: string;
  state: string;
  backlog: Backlog;
  instances: Array<{ instanceId: string; state: string; openUntil: string | null; consecutiveFailures: number; lastError: string | null; deferrals: number; stale: boolean }>;
  updatedAt: string | null;
}

const COLUMNS = ['DESTINATION', 'CIRCUIT', 'OPEN UNTIL', 'QUEUED', 'RETRIES', 'IN FLIGHT', 'DEFERRED', 'LAST ERROR'] as const;

/** A table row per destination; the open-until time and last error come from the instance that reports the worst state. */
export function formatHealth(destinations: DestinationHealthAnswer[]): string[] {
  if (destinations.length === 0) return ['no destinations'];
  const rows = destinations.map((health) => {
    const fresh = health.instances.filter((instance) => !instance.stale);
    const worst = fresh.find((instance) => instance.state === health.state);
    return [
      health.destinationId,
      health.state,
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
};
