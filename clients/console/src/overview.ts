/**
 * The sources-and-destinations page joins three answers — the config, the dispatchers'
 * health and the delivery log's summary of the last hour — into one row per destination.
 * Each may be missing (the delivery log can be unavailable while the rest answers), so a
 * row holds what there is.
 */
import type { Backlog, Destination, DestinationHealth, DestinationSummary, Source } from './api';

export interface DestinationRow {
  destination: Destination;
  health: DestinationHealth | undefined;
  summary: DestinationSummary | undefined;
}

export function destinationRows(
  destinations: readonly Destination[],
  health: readonly DestinationHealth[] | undefined,
  summaries: readonly DestinationSummary[] | undefined,
): DestinationRow[] {
  const healthById = new Map((health ?? []).map((entry) => [entry.destinationId, entry]));
  const summaryById = new Map((summaries ?? []).map((entry) => [entry.destinationId, entry]));
  return [...destinations]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((destination) => ({ destination, health: healthById.get(destination.id), summary: summaryById.get(destination.id) }));
}

/** Deliveries a destination's dispatchers hold now: waiting first attempts, due retries, requests running. */
export function backlogTotal(backlog: Backlog | undefined): number {
  return backlog ? backlog.firstAttempts + backlog.retries + backlog.inFlight : 0;
}

/** The destinations a source feeds, by id. */
export function destinationsOf(source: Source, destinations: readonly Destination[]): string[] {
  return destinations.filter((destination) => destination.sources.includes(source.id)).map((destination) => destination.id);
}

/** How a destination signs its requests, in words; the secrets themselves are never sent to the console. */
export function signingOf(destination: Destination): string {
  const kinds: string[] = [];
  if (destination.settings.sharedSecret !== null) kinds.push('X-Signature (HMAC-SHA1)');
  if (destination.settings.standardWebhooksSecret !== null) kinds.push('Standard Webhooks');
  return kinds.length > 0 ? kinds.join(', ') : 'unsigned';
}

/**
 * The static header names of one webhook URL. Values are left out: they are often
 * credentials (`Authorization: Bearer …`), and the admin API returns them unmasked.
 */
export function headerNames(headers: Record<string, string>): string[] {
  return Object.keys(headers).sort((a, b) => a.localeCompare(b));
}
